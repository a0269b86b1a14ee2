// Package abtest judges a campaign's A/B variants: it counts what each variant's sends did (Load), decides
// whether one variant wins by the campaign's winning rule (Decide, pure), answers both for the API (Read), and
// promotes a winner so the sequence engine sends only it from then on (Promote).
//
// Invariants:
//
//   - Variants are compared within their group: one step's variants (its control included), or the
//     campaign-level variants among themselves. Only active variants are compared; inactive ones are counted
//     and listed but neither win nor hold a decision back.
//   - A group has a winner only when it compares at least two variants, every one of them has at least the
//     minimum sample of sends, and one variant's rate is strictly the highest. Rates are compared exactly
//     (cross-multiplied counts), never as rounded floats; a tie has no winner.
//   - Confidence is a label: "insufficient_data" while a group cannot be decided for want of variants or
//     sends, otherwise the two-proportion z-test (pooled) of the leader against the runner-up: z below 1.645 is
//     "low", below 2.576 "medium", else "high" (one-sided 95 and 99.5 percent). A tie is "low". Confidence
//     never gates a winner: the minimum sample is the campaign owner's gate.
//   - The campaign's single answer (Decision's own Verdict) is, among the groups with a winner, the one with
//     the most sends compared; when none has a winner, the verdict of the group with the most sends compared;
//     earlier groups (by their oldest variant) win ties. With one group it is that group's verdict.
//   - A send counts once handed over (status sent or ambiguous); opens, clicks and replies count only on
//     those. A bounce is a send refused at the recipient (failed with recipient_rejected, which is not a
//     send) or a handed-over send that bounced later; the bounce rate is over both, so no rate exceeds 1.
//     Rates are fractions of sends rounded to four places (0.1234 = 12.34 percent), 0 without sends.
//   - A send counts for the variant whose id it carries (send_tasks.variant_id): sends of a step's own content
//     count for its control only when they carry the control's id.
//   - Promotion happens once per group and is never moved or taken back: promoted_at is stamped on the winner
//     under the campaign's row lock only while no variant of its group has one, and each promotion writes one
//     ab_winner_promoted line to the campaign's activity log in the same transaction.
//   - Every statement runs in the caller's organization-scoped transaction and names organization_id.
package abtest
