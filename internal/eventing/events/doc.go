// Package events is Outflow's transactional outbox. A write that should tell the world something happened
// calls Outbox.Emit inside its own transaction: the event row and the River job that dispatches it commit
// (or roll back) with the change itself, so an event is never lost for a committed change and never sent
// for a rolled-back one. The dispatch job hands each event to the registered consumers (webhooks, the
// realtime gateway, automations) and marks it dispatched.
package events
