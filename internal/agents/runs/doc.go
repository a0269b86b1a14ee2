// Package runs carries agent runs (POST /runs): a durable request to launch outbound mail, or to plan it
// (intent draft), moved through its states by River jobs, with an append-only story of what happened.
//
//	queued -> preflighting -> completed                      (draft: the plan, nothing kept)
//	                       -> failed                         (a refused reference, a blocking preflight)
//	                       -> launching -> active            (the policy gate allowed it, or a session)
//	                       -> awaiting_approval              (the gate refused it: a person decides)
//	awaiting_approval -> preflighting -> launching -> active (approved: everything is checked again)
//	                  -> denied | failed                     (denied or expired; a hard gate refused it)
//	active <-> paused -> completed                           (following the campaign)
//	any state not final -> cancelled                         (POST /runs/{id}/cancel)
//
// # The plan
//
// Preflight builds the campaign the run would send exactly as a launch does (campaign.Store.Create or the
// named campaign changed by the run's settings, senders frozen, inline leads upserted as contacts and
// enrolled with contact ids and segment members) inside a savepoint, and reads it: checks.Evaluate, the
// audience after suppressions and verification verdicts, the frozen senders' capacity and when the first
// sends would leave. A draft then rolls the savepoint back, so it has no effect at all and its plan is the one
// a launch would act on; an approval carries that same plan for the person deciding.
//
// # Invariants
//
//   - A run is created with its first event and its advance job in the request's transaction, and a second
//     request with the same credential and Idempotency-Key answers the first run (the idempotency middleware,
//     then UNIQUE (organization_id, credential_id, idempotency_key)).
//   - Every transition locks the run, checks the move against the state machine (next), saves the run,
//     appends one run_events row (seq 1, 2, ... with the state after it) and raises run.state_changed, in one
//     transaction. run_events rows are never changed or removed (the application role may only insert them).
//   - Failed, denied, completed and cancelled are final: nothing moves a run out of them, and cancelling one
//     is 409 run_final.
//   - A launch asks the policy gate (policy.Check, capability campaign.launch) with the frozen senders and the
//     plan's recipients inside the savepoint, so a launch that is held or fails afterwards counts nothing
//     against the policy. Preflight's error-severity problems, and an audience nobody would be mailed in,
//     stop a launch whatever the policy says; the send pipeline's own gates still apply to every message.
//   - A held launch creates its approval (payload {plan, input}) and nothing else: no campaign, no contacts,
//     no leads. Approving it rebuilds and re-checks everything at once, with the requester's mailbox scope,
//     and never counts against a policy.
//   - The jobs act for the requesting credential, read again when they run: a key revoked or expired since
//     fails the run instead of launching it.
//   - A launched run's campaign is started through the campaign store, so the sequence engine sends it like
//     any other campaign; cancelling the run stops that campaign (its queued sends are cancelled).
//   - An approval's decision reaches its run in the deciding transaction: approving runs the executor (the
//     launch), a denial, an expiry or a hard gate's refusal ends the run through the decision hook; a cancel
//     withdraws a pending approval (denied, "The run was cancelled.").
//   - A launched run has one sync job, which looks at its campaign every SyncInterval and ends when the run
//     does.
package runs
