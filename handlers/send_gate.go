package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/agents/policy"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/identity/orgs"
	"github.com/outflowhq/outflow/internal/inbox/actions"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// The audit events of the gated sends; an approved send is recorded under its request's event.
const (
	eventDirectSend = "mailbox.direct_send"
	eventCompose    = "unibox.compose"
	eventReply      = "unibox.reply"
)

// gatedSend is one direct send, compose or reply through the agent policy gate: what it needs (email.compose
// or inbox.reply) and how it is audited.
type gatedSend struct {
	capability policy.Capability
	event      string
	draft      actions.Draft
}

// sendOutcome is what a gated send did: queued (task) or held for a person (approval).
type sendOutcome struct {
	task     dbq.SendTask
	approval dbq.Approval
	held     bool
}

// sendThroughGate sends g for p in tx when the policy gate allows it (sessions always; API keys and OAuth
// grants within their policy), or else checks it as the send would (a refusal is answered at once) and holds
// it for a person's approval, queueing nothing. Either way it is audited.
func sendThroughGate(ctx context.Context, tx pgx.Tx, jobs events.Inserter, held *approvals.Service, p *auth.Principal, s actions.Scope,
	g gatedSend, now time.Time) (sendOutcome, error) {
	msg := g.draft.Message
	d, err := policy.Check(ctx, tx, p, policy.Action{Capability: g.capability, Mailboxes: []uuid.UUID{g.draft.Mailbox},
		Recipients: len(msg.To) + len(msg.Cc) + len(msg.Bcc)}, now)
	if err != nil {
		return sendOutcome{}, err
	}
	if d.Allowed {
		task, err := actions.Send(ctx, tx, jobs, s, g.draft, now)
		if err != nil {
			return sendOutcome{}, err
		}
		return sendOutcome{task: task}, auditSend(ctx, tx, g.event, g.draft, task, nil)
	}
	if err := actions.Check(ctx, tx, s, g.draft, now); err != nil {
		return sendOutcome{}, err
	}
	a, err := held.Create(ctx, tx, p, approvals.Request{ActionType: g.capability, Payload: heldSendOf(g, s).object(), Decision: d,
		Summary: sendSummary(msg)}, now)
	if err != nil {
		return sendOutcome{}, err
	}
	return sendOutcome{approval: a, held: true}, audit.Record(ctx, tx, audit.Entry{Action: audit.ActionSend, Event: string(events.ApprovalRequested),
		EntityType: audit.EntityApproval, EntityID: a.ID.String(), Metadata: map[string]any{"action_type": a.ActionType, "request_event": g.event,
			"mailbox_id": g.draft.Mailbox, "to": msg.To, "cc": msg.Cc, "bcc_count": len(msg.Bcc), "subject": msg.Subject, "reasons": a.Reasons}})
}

// auditSend records a queued send under event, with extra's keys (an approved send's approval and approver).
func auditSend(ctx context.Context, tx pgx.Tx, event string, d actions.Draft, task dbq.SendTask, extra map[string]any) error {
	msg := d.Message
	meta := map[string]any{"mailbox_id": d.Mailbox, "from": task.FromEmail, "to": msg.To, "cc": msg.Cc, "bcc_count": len(msg.Bcc),
		"subject": msg.Subject, "send_mode": msg.Mode}
	if event != eventDirectSend {
		meta["thread_id"] = threadIDOf(task.ThreadID).Value
	}
	for k, v := range extra {
		meta[k] = v
	}
	return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionSend, Event: event, EntityType: audit.EntityEmail, EntityID: task.ID.String(), Metadata: meta})
}

// heldSend is a held send's approval payload: the checked message exactly as it would have been queued, the
// request's audit event, and the requester's mailbox scope (AllowedMailboxes null: every mailbox), so that
// approving sends with the requester's limits, never the approver's.
type heldSend struct {
	Event            string       `json:"event"`
	MailboxID        uuid.UUID    `json:"mailbox_id"`
	Kind             string       `json:"kind"`
	To               []string     `json:"to"`
	Cc               []string     `json:"cc"`
	Bcc              []string     `json:"bcc"`
	Subject          string       `json:"subject"`
	BodyPlain        string       `json:"body_plain"`
	BodyHTML         string       `json:"body_html"`
	InReplyTo        string       `json:"in_reply_to,omitempty"`
	References       []string     `json:"references,omitempty"`
	SendMode         string       `json:"send_mode"`
	ScheduledAt      *time.Time   `json:"scheduled_at,omitempty"`
	ThreadID         string       `json:"thread_id,omitempty"`
	NewThread        bool         `json:"new_thread,omitempty"`
	AllowedMailboxes *[]uuid.UUID `json:"allowed_mailboxes"`
}

func heldSendOf(g gatedSend, s actions.Scope) heldSend {
	m := g.draft.Message
	h := heldSend{Event: g.event, MailboxID: g.draft.Mailbox, Kind: m.Kind, To: m.To, Cc: m.Cc, Bcc: m.Bcc, Subject: m.Subject,
		BodyPlain: m.Text, BodyHTML: m.HTML, InReplyTo: m.InReplyTo, References: m.References, SendMode: m.Mode,
		ThreadID: g.draft.Thread, NewThread: g.draft.NewThread}
	if !m.NotBefore.IsZero() {
		h.ScheduledAt = &m.NotBefore
	}
	if s.Mailboxes != nil {
		h.AllowedMailboxes = &s.Mailboxes
	}
	return h
}

// object is h as the JSON object an approval's payload is.
func (h heldSend) object() map[string]any {
	raw, _ := json.Marshal(h) // strings, ids and times: it always encodes
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// draft is the held message as actions.Send takes it, and the requester's scope in org.
func (h heldSend) draft(org uuid.UUID) (actions.Draft, actions.Scope) {
	msg := sending.Message{Kind: h.Kind, To: h.To, Cc: h.Cc, Bcc: h.Bcc, Subject: h.Subject, Text: h.BodyPlain, HTML: h.BodyHTML,
		InReplyTo: h.InReplyTo, References: h.References, Mode: h.SendMode}
	if h.ScheduledAt != nil {
		msg.NotBefore = *h.ScheduledAt
	}
	s := actions.Scope{Org: org}
	if h.AllowedMailboxes != nil {
		s.Mailboxes = *h.AllowedMailboxes
	}
	return actions.Draft{Mailbox: h.MailboxID, Message: msg, Thread: h.ThreadID, NewThread: h.NewThread}, s
}

// sendSummary is a held message in one line for the people who decide: its subject and recipients.
func sendSummary(m sending.Message) string {
	all := append(append(append([]string{}, m.To...), m.Cc...), m.Bcc...)
	who := strings.Join(all, ", ")
	if len(all) > 3 {
		who = fmt.Sprintf("%s and %d more", strings.Join(all[:3], ", "), len(all)-3)
	}
	return fmt.Sprintf("%q to %s", m.Subject, who)
}

// SendApproved is the executor of approved email.compose and inbox.reply approvals (direct sends, composed
// messages, replies): it sends the held message through actions.Send with the requester's mailbox scope, so
// every hard gate (mailbox held or disconnected, suppressions, pending sends, the unified inbox for unibox
// sends under edition) runs again now, and records the request's audit entry with the approval and approver.
func SendApproved(jobs events.Inserter, edition orgs.Edition) approvals.Executor {
	return func(ctx context.Context, tx pgx.Tx, a dbq.Approval, approver *auth.Principal, now time.Time) (map[string]any, error) {
		var h heldSend
		if err := json.Unmarshal(a.Payload, &h); err != nil {
			return nil, fmt.Errorf("approved send %s: payload: %w", a.ID, err)
		}
		if h.Event != eventDirectSend {
			if err := orgs.UnifiedInbox(ctx, tx, edition, a.OrganizationID, now); err != nil {
				return nil, err
			}
		}
		d, s := h.draft(a.OrganizationID)
		task, err := actions.Send(ctx, tx, jobs, s, d, now)
		if err != nil {
			return nil, err
		}
		if err := auditSend(ctx, tx, h.Event, d, task, map[string]any{"approval_id": a.ID, "approved_by": approver.UserID,
			"requester_kind": a.CredentialKind, "requester_id": a.CredentialID}); err != nil {
			return nil, err
		}
		return map[string]any{"task_id": task.ID, "scheduled_at": task.NotBefore, "send_mode": task.SendMode,
			"thread_id": threadIDOf(task.ThreadID).Value}, nil
	}
}
