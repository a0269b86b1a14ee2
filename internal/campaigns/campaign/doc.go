// Package campaign is the campaign model of part 3: its settings with every field rule, its steps, and the
// operations that create, change, copy, delete, start and stop campaigns. Handlers map API types to the
// inputs here; the sequence engine reads what this package writes.
//
// Invariants:
//   - Every statement runs in the caller's organization-scoped transaction (db.WithOrgTx), so a campaign's
//     rows, its outbox event and its audit entry commit together or not at all.
//   - A stored campaign always satisfies Validate: create, update and duplicate validate the whole resulting
//     settings, not only the fields sent, so no sequence of edits reaches a state a single call would refuse.
//   - text_only campaigns never track: storing one turns open_tracking and link_tracking off.
//   - kind is fixed at creation; a one_time campaign holds at most one email step.
//   - Steps are dense by position from 0 (the chain is the graph; conditions are kept verbatim), the first
//     step waits 0 days unless told otherwise. Editing one step (stepedit.go) re-evaluates only that step, and
//     each lead carries on after the step it was last sent.
//   - Edits of a campaign's parts (steps, variants, senders, attachments) lock its row, so they apply one after
//     the other, and each raises campaign.updated with an audit entry.
//   - A step has at most one control variant and a campaign-level variant is never one; a control's subject
//     and bodies are stored empty.
//   - An active campaign with the explicit strategy and no mailbox left to send from is paused_no_accounts;
//     the explicit pool never widens.
//   - Attachments live in Postgres within MaxAttachmentBytes each, MaxAttachments and
//     MaxCampaignAttachmentBytes per campaign.
//   - Deleting a campaign cancels its queued send tasks and clears deal links in the same transaction; sent
//     mail, contacts, suppressions and tracked links stay.
//   - New campaigns (create and duplicate) count toward a per-organization UTC-day throttle that deletion does
//     not give back.
package campaign
