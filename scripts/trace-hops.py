#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where an add-after's lateness goes, hop by hop, against clock_nanosleep.

    scripts/trace-hops.py [--wakes] KWQ_TRACE BASE_TRACE

The two files are ftrace text of `kwq_bench delay` and `kwq_bench
delay-base` runs of the same deadlines (bench/guest-ab.sh's hops figures
record them; scripts/bench-ab.sh calls this). For every time a run of the
timer (kwq's queue timer, hard or soft; the sleeper's hrtimer_wakeup)
woke the consumer while it slept, it splits the way from the timer's
expiry to the consumer's clock read into hops:

  deadline -> run     how late the timer ran: its hrtimer_expire_entry's
                      now less the expiry its last hrtimer_start gave it
  run -> wake-up      the run's work up to the consumer's sched_waking
                      (in the same context, on the same CPU)
  wake-up -> on CPU   the rest of the interrupt, the switch to the consumer
                      (on whichever CPU it runs)
  on CPU -> return    the rest of the call it slept in (a get, a nanosleep)
  return -> clock     its clock read, when that is a system call

Hops are in the trace clock (local_clock()), the lateness in ktime; both
in microseconds. Tracing slows both runs: the hops say where, not how
much. Also counts the wake-ups per key, the share that went to another
CPU, the timer wake-ups that found the consumer still on a CPU, the
timer interrupts and the time spent in them (from the first timer run
on), and where kwq's timer ran its steps. --wakes prints each wake-up
instead: who, its CPU and context (h, s), whether it went to another
CPU, the hops.
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


def consumer_pid(ev):
    """The task the timer's wake-ups went to most: the consumer."""
    woken = Counter(int(field(e, 'pid')) for e in ev
                    if e['ev'] == 'sched_wakeup' and field(e, 'comm') == 'kwq_bench')
    return woken.most_common(1)[0][0] if woken else -1


def context(e):
    """The flags' third letter: h (hard interrupt, H: one inside a softirq), s, or '.'."""
    c = e['fl'][2] if len(e['fl']) > 2 else '.'
    return 'h' if c in 'hH' else c


def next_event(ev, i, pred):
    """The index of the first event after i that pred() accepts, or None."""
    for j in range(i + 1, len(ev)):
        if pred(ev[j]):
            return j
    return None


def wakes(ev, pid, is_timer, waiting_nr):
    """
    Each wake-up of the sleeping consumer (pid) by a run of a timer is_timer()
    accepts (its hrtimer_expire_entry), as a dict of hops, its CPU and
    whether it went to another CPU; and how many such wake-ups found the
    consumer still on a CPU. A run's lateness is its hrtimer_expire_entry's
    now less the expiry its last hrtimer_start gave it; its wake-up is the
    consumer's sched_waking in the same context (hard or soft interrupt)
    on the same CPU, the first of that run.
    """
    expires, run, out, awake, on_cpu = {}, {}, [], 0, False
    for i, e in enumerate(ev):
        if e['ev'] == 'hrtimer_start':
            expires[(field(e, 'hrtimer'), field(e, 'function'))] = int(field(e, 'expires'))
        elif e['ev'] == 'hrtimer_expire_entry':
            key = (field(e, 'hrtimer'), field(e, 'function'))
            if is_timer(e) and key in expires:
                run[(e['cpu'], context(e))] = (e['t'], (int(field(e, 'now')) - expires[key]) / 1e3)
            else:
                run.pop((e['cpu'], context(e)), None)
        elif e['ev'] == 'sched_switch':
            if field(e, 'next_pid') == str(pid):
                on_cpu = True
            elif field(e, 'prev_pid') == str(pid):
                on_cpu = False
        elif (e['ev'] == 'sched_waking' and field(e, 'pid') == str(pid) and
              (e['cpu'], context(e)) in run):
            t_run, late = run.pop((e['cpu'], context(e)))
            if on_cpu:
                awake += 1
                continue
            j = next_event(ev, i, lambda x: (x['ev'] == 'sched_switch' and
                                              field(x, 'next_pid') == str(pid)) or
                           (x['ev'] == 'sys_exit' and x['pid'] == pid))
            if j is None or ev[j]['ev'] != 'sched_switch':
                continue
            k = next_event(ev, j, lambda x: x['ev'] == 'sys_exit' and x['pid'] == pid)
            if k is None or syscall_nr(ev[k]) != waiting_nr:
                continue
            hop = {'deadline -> run': late, 'run -> wake-up': e['t'] - t_run,
                   'wake-up -> on CPU': ev[j]['t'] - e['t'],
                   'on CPU -> return': ev[k]['t'] - ev[j]['t'],
                   'cpu': e['cpu'], 'ctx': context(e), 'cross': ev[j]['cpu'] != e['cpu']}
            total = late + ev[k]['t'] - t_run
            c = next_event(ev, k, lambda x: x['ev'] == 'sys_enter' and x['pid'] == pid)
            if c is not None and syscall_nr(ev[c]) == NR_CLOCK_GETTIME:
                x = next_event(ev, c, lambda x: x['ev'] == 'sys_exit' and x['pid'] == pid)
                if x is not None:
                    hop['return -> clock'] = ev[x]['t'] - ev[k]['t']
                    total += hop['return -> clock']
            hop['sum'] = total
            out.append(hop)
    return out, awake


def interrupts(ev, pid, is_timer):
    """
    The timer interrupts from the first run of a timer is_timer() accepts
    on (local_timer_entry to its exit): how many, the time in them on a
    busy and on an idle CPU, and whom they interrupted (the consumer, pid;
    another task of the benchmark: kwq's producer; an idle CPU; anything
    else).
    """
    runs = [e['t'] for e in ev if e['ev'] == 'hrtimer_expire_entry' and is_timer(e)]
    start, entered = (min(runs) if runs else 0), {}
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


def kwq_timer(e):
    """kwq's queue timer (hard) or the soft one it hands a step to."""
    return field(e, 'function') in ('kwq_timer_hard_fn', 'kwq_rerun_fn', 'kwq_timer_fn')


def base_timer(e):
    return field(e, 'function') == 'hrtimer_wakeup'


def row(label, kwq, base):
    print(f'  {label:58s} {kwq:>12s} {base:>16s}')


def main():
    args = sys.argv[1:]
    dump = bool(args) and args[0] == '--wakes'
    if dump:
        args = args[1:]
    if len(args) != 2:
        sys.exit('usage: trace-hops.py [--wakes] KWQ_TRACE BASE_TRACE')
    kev, bev = parse(args[0]), parse(args[1])
    kpid, bpid = consumer_pid(kev), consumer_pid(bev)
    kw, kawake = wakes(kev, kpid, kwq_timer, NR_IOCTL)
    bw, bawake = wakes(bev, bpid, base_timer, NR_CLOCK_NANOSLEEP)
    keys = sum(e['ev'] == 'kwq_fire' for e in kev)
    if not kw or not bw or not keys:
        sys.exit('trace-hops.py: no timer wake-up of a sleeping consumer traced')
    if dump:
        # One line per wake-up: who, its CPU and context, whether it went
        # to another CPU, the hops.
        for who, ws in (('kwq', kw), ('base', bw)):
            for w in ws:
                print(who, w['cpu'], w['ctx'], int(w['cross']),
                      ' '.join(f'{w[h]:.2f}' if h in w else '-' for h in HOPS))
        return
    print(f'{"per timer wake-up of the sleeping consumer, us (p50 / p90)":60s}'
          f' {"kwq":>12s} {"clock_nanosleep":>16s}')
    for h in HOPS:
        row(h, cell([w[h] for w in kw if h in w]), cell([w[h] for w in bw if h in w]))
    row('timer wake-ups of the sleeping consumer (per key)', f'{len(kw)} ({len(kw) / keys:.2f})',
        f'{len(bw)} ({len(bw) / keys:.2f})')
    row('of them sent to another CPU', f'{100 * sum(w["cross"] for w in kw) / len(kw):.0f} %',
        f'{100 * sum(w["cross"] for w in bw) / len(bw):.0f} %')
    row('timer wake-ups that found it still on a CPU', str(kawake), str(bawake))
    kn, kbusy, kidle, kwhom = interrupts(kev, kpid, kwq_timer)
    bn, bbusy, bidle, _ = interrupts(bev, bpid, base_timer)
    row('timer interrupts (per key)', f'{kn} ({kn / keys:.2f})', f'{bn} ({bn / keys:.2f})')
    row('ms in them on a busy CPU / on an idle one', f'{kbusy:.1f} / {kidle:.1f}',
        f'{bbusy:.1f} / {bidle:.1f}')
    where = Counter()
    for e in kev:
        if e['ev'] == 'hrtimer_expire_entry' and kwq_timer(e):
            where['soft' if context(e) != 'h' else 'hard, idle CPU' if e['comm'] == '<idle>'
                  else 'hard, busy CPU'] += 1
    runs = sum(where.values())
    print(f'  kwq timer runs: {runs} for {keys} keys: ' +
          ', '.join(f'{k} {100 * v / runs:.0f} %' for k, v in sorted(where.items())))
    if kn:
        print('  kwq\'s timer interrupts came on: ' +
              ', '.join(f'{k} {100 * v / kn:.0f} %' for k, v in sorted(kwhom.items())))


if __name__ == '__main__':
    main()
