// Package leadgate is the agent policy gate on adding people to campaigns. A lead added to a campaign that
// sends (active, or completed: the engine restarts a completed campaign that gains a lead) is mailed without
// anyone starting it, so for an API key or OAuth grant every way of adding one is an outbound action, as a
// launch is: contacts written with campaigns (POST and PATCH /contacts, PATCH /contacts/{id}), an import naming
// campaigns, contacts pinned into a segment linked to such a campaign (POST /contacts segments, an import's
// segment_ids, POST /segments/{id}/members), a segment linked to it (PATCH /campaigns/{id} segment_ids), a
// segment's filters changed under it (PATCH /segments/{id}), and contacts whose change (fields, subscription,
// categories, campaigns; or their creation) brings them into a dynamic segment linked to it (POST and PATCH
// /contacts, PATCH /contacts/{id}, imports).
//
// Invariants:
//   - A session (a signed-in person) is never held: what it asks is written at once, as before.
//   - For a credential, leads of draft and paused campaigns are written at once: nothing is mailed until a
//     start or resume, which is the gated launch and counts every pending lead (handlers' agentLaunch). So
//     that it does, a credential's pin enrolls its contact at once in every campaign linked to the segment
//     instead of leaving it to the periodic job. A manual hold and its resume (POST
//     .../leads/{contactId}/pause|resume) add nobody and are not gated.
//   - The new leads a credential's write adds to campaigns that send (one per contact and campaign; existing
//     leads do not count; a pin counts the leads it brings into every sending campaign linked to its segment)
//     are one policy.Check action with capability campaign.launch, the campaigns' sendable mailboxes and
//     those leads as its recipients, in the write's transaction: allowed, they are added at once (a pin's
//     leads enrolled with it, not left to the periodic job) and counted with the write; otherwise nothing of
//     them is written and one approval (action type campaign.launch, operation OpAddLeads or
//     OpLinkSegments) holds them, created with its approval.requested event and audit entry, while the rest
//     of the write (other fields, other campaigns, categories) is made.
//   - The campaigns a gated write reaches are locked (FOR UPDATE, in id order) before their status is read,
//     so a concurrent start, stop or completion cannot slip a lead past the decision. A segment's membership
//     changes lock it FOR NO KEY UPDATE only, so a write that locks a campaign and then links or pins into the
//     segment (a foreign-key check) never waits on one that holds the segment and waits for the campaign.
//   - What an approval holds is kept in held_leads (leads and pins; up to an import's 50,000 contacts) or its
//     payload (segment links); approving writes what still exists at that moment (deleted contacts, campaigns
//     and segments take their held rows along) with the approver as the person who acted, counting nothing
//     against a policy; a denial or an expiry writes nothing. When nothing is left, the approval stays
//     approved with the refusal as its result.
//   - A segment filter change that would add leads to campaigns that send is allowed or refused (403
//     agent_policy_required), not held: it is a rule, not a list of people, and a person can make it.
//   - A credential's contact write reads, before it changes them (Watch, which locks them FOR NO KEY UPDATE
//     so a concurrent writer's change is not taken for its own), which segments of the campaigns linked to a
//     dynamic segment its contacts are in; Add reads them again after. A pair (contact, campaign) whose
//     contact is in one of the campaign's segments after and in none before, and that is not a lead, is a
//     new lead of the write like a named one: enrolled at once in a campaign that does not send, and for one
//     that sends counted with the others in the one action or held with them. A contact that was in the
//     campaign's segments before (the periodic job enrolls it under the link) or is in none after counts
//     nothing; one the write created was in none. Those campaigns are locked with the others.
//   - Add finds those pairs after writing the request as if it were allowed, in a savepoint, reading again
//     while a lead it enrolls may bring its contact into another segment (one selecting by campaign leads),
//     so a lead of a draft campaign that brings its contact into a segment of an active one is counted too;
//     refused, the savepoint rolls back and what adds nobody to a campaign that sends is written again.
//   - A held pair a segment brings is marked held_leads.via_segment: enrolment (campaign.Enroll) skips it
//     while the approval is pending, and after a denial or an expiry while the contact stays in the
//     campaign's segments; an enrolment run that finds it out drops the mark, so a person bringing it back
//     in later has it enrolled. Approving adds the lead.
//   - What changes a contact without a credential's write (a session's change, the engine's lead states and
//     engagement, a verification run's verdicts, time passing an updated_before bound) is enrolled by the
//     periodic job under the link, which a person or a policy allowed.
package leadgate
