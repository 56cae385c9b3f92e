// SPDX-License-Identifier: GPL-2.0

package kwq

import "math/bits"

// PriorityLevel maps a controller-runtime priority (any int, higher
// first: its default is 0, handler.LowPriority -100, and -100..100 covers
// what controllers use) onto kwq's levels PriorityMin (-8) to PriorityMax
// (7), for AddWithPriority and AddAfterWithPriority. The sign is kept, 0
// stays 0, and each power of two of |p| is one level:
//
//	p        0   1      2..3   4..7    8..15    16..31   32..63      64 and up
//	level    0   1      2      3       4        5        6           7
//	p           -1     -2..-3 -4..-7  -8..-15  -16..-31 -32..-63    -64..-127   -128 and down
//	level       -1     -2     -3      -4       -5       -6          -7          -8
//
// so LowPriority (-100) is -7. The mapping keeps order: a higher priority
// never gets a lower level, so keys whose priorities fall on different
// levels are handed out in controller-runtime's order; priorities that
// share a level (10 and 12, or 100 and 1000) are handed out FIFO, as
// keys of one priority are. Small priorities keep their distinctions
// (0, 1, 2 and 4 are all apart), large ones are told apart by magnitude.
func PriorityLevel(p int) int {
	if p >= 0 {
		if l := bits.Len(uint(p)); l < PriorityMax {
			return l
		}
		return PriorityMax
	}
	// -(p+1) does not overflow, even for the most negative int.
	if l := bits.Len(uint(-(p + 1)) + 1); l < -PriorityMin {
		return -l
	}
	return PriorityMin
}
