// Package metrics defines, once, what the analytics reports count and every rate and score they derive: the
// counters a rollup row carries (Counters), each rate with its numerator and denominator, and the
// deliverability score and band. Reports and the OpenAPI descriptions name these definitions; no report
// computes a rate of its own.
//
// Invariants:
//   - Every rate is a percentage (0 to 100 for a part of its whole) rounded to two decimals, and 0 while its
//     denominator is 0: nothing divides by zero and no report shows NaN.
//   - Counts of people are human counts: opens and clicks by machines are counted apart (MachineOpens,
//     MachineClicks) and rates use the human share.
//   - Score is 100 minus three saturating penalties and never leaves 0..100; Band is a pure function of it.
package metrics
