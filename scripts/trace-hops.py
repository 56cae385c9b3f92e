#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where an add-after's lateness goes, hop by hop, against clock_nanosleep.

    scripts/trace-hops.py KWQ_TRACE BASE_TRACE

The two files are ftrace text of `kwq_bench delay` and `kwq_bench
delay-base` runs of the same deadlines (bench/guest-ab.sh's hops figures
record them; scripts/bench-ab.sh calls this). For every time the timer
woke the sleeping consumer, it splits the way from the deadline to the
consumer's clock read into hops:

  deadline -> run     how late the timer ran (kwq_fire's ns for the first
                      key of the run; hrtimer_wakeup's now - expires)
  run -> wake-up      the timer's work up to the consumer's wake-up
  wake-up -> on CPU   the rest of the interrupt, the switch to the consumer
  on CPU -> return    the rest of the call it slept in (a get, a nanosleep)
  return -> clock     its clock read, when that is a system call

Hops are in the trace clock (local_clock()), the lateness in ktime; both
in microseconds. Tracing slows both runs: the hops say where, not how
much. Also counts the wake-ups per key, the share of wake-ups sent to
another CPU, the timer interrupts and the time spent in them (from the
first timer run on), and where kwq's timer ran its steps.
"""
import re
import sys
from collections import Counter

LINE = re.compile(r'\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+): (\w+): (.*)')
HOPS = ('deadline -> run', 'run -> wake-up', 'wake-up -> on CPU', 'on CPU -> return',
        'return -> clock', 'sum')
NR_IOCTL, NR_CLOCK_GETTIME, NR_CLOCK_NANOSLEEP = 16, 228, 230


def parse(path):
    """The trace's events as dicts: pid, cpu, flags, t (us), ev, args."""
    out = []
    with open(path, errors='replace') as f:
        for line in f:
            m = LINE.match(line)
            if m:
                out.append({'comm': m.group(1), 'pid': int(m.group(2)), 'cpu': int(m.group(3)),
                            'fl': m.group(4), 't': float(m.group(5)) * 1e6,
                            'ev': m.group(6), 'a': m.group(7)})
    return out


def field(e, name):
    m = re.search(r'\b' + name + r'=(\S+)', e['a'])
    return m.group(1) if m else None


def syscall_nr(e):
    m = re.match(r'NR (\d+)', e['a'])
    return int(m.group(1)) if m else -1


def in_hardirq(e):
    """The flags' third letter: h (hard interrupt) or H (one inside a softirq)."""
    return len(e['fl']) > 2 and e['fl'][2] in 'hH'


def consumer_pid(ev):
    """The task the timer's wake-ups went to most: the consumer."""
    woken = Counter(int(field(e, 'pid')) for e in ev
                    if e['ev'] == 'sched_wakeup' and field(e, 'comm') == 'kwq_bench')
    return woken.most_common(1)[0][0] if woken else -1


def wakes(ev, is_run, lateness, waiting_nr):
    """
    Each wake-up of the sleeping consumer by a timer run, as a dict of hops.
    is_run(e) says whether e starts a timer run; lateness(e) its deadline ->
    run hop, or None.
    """
    pid = consumer_pid(ev)
    out, run, cross = [], {}, 0
    i = 0
    while i < len(ev):
        e = ev[i]
        if is_run(e):
            late = lateness(e)
            if late is not None and e['cpu'] not in run:
                run[e['cpu']] = (e['t'], late)
        elif e['ev'] == 'local_timer_entry':
            run.pop(e['cpu'], None)
        elif (e['ev'] == 'sched_wakeup' and in_hardirq(e) and
              field(e, 'pid') == str(pid) and e['cpu'] in run):
            t_run, late = run.pop(e['cpu'])
            target = int(field(e, 'target_cpu'))
            cross += target != e['cpu']
            hop = {'deadline -> run': late, 'run -> wake-up': e['t'] - t_run}
            j = i + 1
            while j < len(ev) and not (ev[j]['ev'] == 'sched_switch' and
                                       field(ev[j], 'next_pid') == str(pid)):
                j += 1
            k = j + 1
            while k < len(ev) and not (ev[k]['ev'] == 'sys_exit' and ev[k]['pid'] == pid):
                k += 1
            if k < len(ev) and syscall_nr(ev[k]) == waiting_nr:
                hop['wake-up -> on CPU'] = ev[j]['t'] - e['t']
                hop['on CPU -> return'] = ev[k]['t'] - ev[j]['t']
                total = late + ev[k]['t'] - t_run
                c = k + 1
                while c < len(ev) and not (ev[c]['ev'] == 'sys_enter' and ev[c]['pid'] == pid):
                    c += 1
                if c < len(ev) and syscall_nr(ev[c]) == NR_CLOCK_GETTIME:
                    while c < len(ev) and not (ev[c]['ev'] == 'sys_exit' and ev[c]['pid'] == pid):
                        c += 1
                    if c < len(ev):
                        hop['return -> clock'] = ev[c]['t'] - ev[k]['t']
                        total += hop['return -> clock']
                hop['sum'] = total
                out.append(hop)
        i += 1
    return out, cross


def interrupts(ev):
    """
    The timer interrupts from the first timer run on (local_timer_entry to
    its exit): how many, the time in them on a busy and on an idle CPU,
    and whom they interrupted (the consumer, another task of the
    benchmark: kwq's producer, an idle CPU, anything else).
    """
    runs = [e['t'] for e in ev if e['ev'] == 'kwq_fire' or
            (e['ev'] == 'hrtimer_expire_entry' and field(e, 'function') == 'hrtimer_wakeup')]
    start, entered, pid = (min(runs) if runs else 0), {}, consumer_pid(ev)
    n, busy, idle, whom = 0, 0.0, 0.0, Counter()
    for e in ev:
        if e['t'] < start:
            continue
        if e['ev'] == 'local_timer_entry':
            entered[e['cpu']] = e
        elif e['ev'] == 'local_timer_exit' and e['cpu'] in entered:
            enter = entered.pop(e['cpu'])
            n += 1
            if enter['comm'] == '<idle>':
                idle += e['t'] - enter['t']
                whom['an idle CPU'] += 1
            else:
                busy += e['t'] - enter['t']
                whom['the consumer' if enter['pid'] == pid else
                     'the producer' if enter['comm'] == 'kwq_bench' else 'other tasks'] += 1
    return n, busy / 1e3, idle / 1e3, whom


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(p / 100 * len(v) + 0.999999) - 1))] if v else None


def cell(v):
    if not v:
        return '-'
    return f'{pct(v, 50):.0f} / {pct(v, 90):.0f}'


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: trace-hops.py KWQ_TRACE BASE_TRACE')
    kev, bev = parse(sys.argv[1]), parse(sys.argv[2])

    def kwq_run(e):
        return e['ev'] == 'kwq_fire'

    def kwq_late(e):
        return int(field(e, 'ns')) / 1e3

    starts = {}

    def base_run(e):
        if e['ev'] == 'hrtimer_start' and field(e, 'function') == 'hrtimer_wakeup':
            starts[e['cpu']] = int(field(e, 'expires'))
        return e['ev'] == 'hrtimer_expire_entry' and field(e, 'function') == 'hrtimer_wakeup'

    def base_late(e):
        # The sleeper armed its timer on this CPU just before it slept.
        exp = starts.pop(e['cpu'], None)
        return None if exp is None else (int(field(e, 'now')) - exp) / 1e3

    kw, kcross = wakes(kev, kwq_run, kwq_late, NR_IOCTL)
    bw, bcross = wakes(bev, base_run, base_late, NR_CLOCK_NANOSLEEP)
    keys = sum(e['ev'] == 'kwq_fire' for e in kev)
    if not kw or not bw or not keys:
        sys.exit('trace-hops.py: no timer wake-up of a sleeping consumer traced')
    print(f'{"per timer wake-up of the sleeping consumer, us (p50 / p90)":60s}'
          f' {"kwq":>12s} {"clock_nanosleep":>16s}')
    for h in HOPS:
        print(f'  {h:58s} {cell([w[h] for w in kw if h in w]):>12s}'
              f' {cell([w[h] for w in bw if h in w]):>16s}')
    print(f'  {"wake-ups traced (per key)":58s} {f"{len(kw)} ({len(kw) / keys:.2f})":>12s}'
          f' {f"{len(bw)} ({len(bw) / keys:.2f})":>16s}')
    print(f'  {"of them sent to another CPU":58s} {f"{100 * kcross / len(kw):.0f} %":>12s}'
          f' {f"{100 * bcross / len(bw):.0f} %":>16s}')
    kn, kbusy, kidle, kwhom = interrupts(kev)
    bn, bbusy, bidle, _ = interrupts(bev)
    print(f'  {"timer interrupts (per key)":58s} {f"{kn} ({kn / keys:.2f})":>12s}'
          f' {f"{bn} ({bn / keys:.2f})":>16s}')
    print(f'  {"ms in them on a busy CPU / on an idle one":58s} {f"{kbusy:.1f} / {kidle:.1f}":>12s}'
          f' {f"{bbusy:.1f} / {bidle:.1f}":>16s}')
    where = Counter()
    for e in kev:
        if e['ev'] == 'hrtimer_expire_entry' and 'kwq' in e['a']:
            where['soft' if not in_hardirq(e) else 'hard, idle CPU' if e['comm'] == '<idle>'
                  else 'hard, busy CPU'] += 1
    runs = sum(where.values())
    print(f'  kwq timer runs: {runs} for {keys} keys: ' +
          ', '.join(f'{k} {100 * v / runs:.0f} %' for k, v in sorted(where.items())))
    if kn:
        print('  kwq\'s timer interrupts came on: ' +
              ', '.join(f'{k} {100 * v / kn:.0f} %' for k, v in sorted(kwhom.items())))


if __name__ == '__main__':
    main()
