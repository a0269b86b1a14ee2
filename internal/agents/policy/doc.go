// Package policy is the one gate every outbound entry point asks before it acts for a caller (direct send,
// unibox compose and reply, run launches, a campaign started or set active, leads added to a campaign that
// sends (package leadgate), managed-mailbox provisioning): may this credential do this now, without a person?
//
// Invariants:
//   - A session (a signed-in person) is human-authorised: Check allows it and counts nothing.
//   - An API key or OAuth grant acts autonomously only under the one enabled agent policy bound to exactly that
//     credential, unexpired at now, holding the action's capability, listing every mailbox the action uses,
//     with the action's recipients within max_recipients_per_run, and today's (UTC) recipients and actions
//     plus this action within max_recipients_per_day and max_actions_per_day. mailbox.provision also needs
//     max_monthly_mailbox_spend_cents, and the order's monthly spend within it.
//   - Check is one statement in the caller's transaction: an indexed read of the policy (with today's usage)
//     and, only when every rule holds, a conditional upsert of agent_policy_usage. Two concurrent actions can
//     never both take the last unit, a refused action counts nothing, and a count rolls back with the action.
//     The statement decides; the Go rules (refusals) only explain a refusal from what it read.
//   - A refusal says why in sentences for people (Decision.Reasons); the caller then holds the action for a
//     human approval (package approvals) and does nothing else. Actions a human approved never count. A
//     campaign start is the one answered 403 agent_policy_required instead: its held form is POST /runs with
//     the campaign_id, which a person approves.
//   - The policy only decides who may act autonomously. Suppressions, organization limits, holds, domain
//     authentication and health stay with the actions themselves and run whatever the decision.
package policy
