package testrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/audience/suppression"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// EmailInput is what POST /campaigns/{id}/test-email asks for.
type EmailInput struct {
	// MailboxID is the sender; it must be an active mailbox of the organization the caller may use.
	MailboxID uuid.UUID
	// Recipient is where the message goes.
	Recipient string
	// StepID is the step sent (invalid: the first email step).
	StepID uuid.NullUUID
	// Only limits the mailboxes the caller may send from (nil: every mailbox of the organization).
	Only []uuid.UUID
}

// SendEmail sends one step of c to a test recipient, now, as a direct send with the step's files: composed for
// the contact with the recipient's address, else for the campaign's first lead, else with only the address
// known. A message with an unresolved variable is refused (400 unresolved_variables), as is a suppressed
// recipient. It answers the task written in tx.
func SendEmail(ctx context.Context, tx pgx.Tx, jobs events.Inserter, org uuid.UUID, c campaign.Campaign, in EmailInput) (dbq.SendTask, error) {
	to, ok := contacts.NormalizeEmail(in.Recipient)
	if !ok {
		return dbq.SendTask{}, apierror.BadRequest("invalid_recipient", fmt.Sprintf("recipient %q is not an email address.", in.Recipient))
	}
	m, err := queries.MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: org, ID: in.MailboxID})
	if errors.Is(err, pgx.ErrNoRows) || err == nil && in.Only != nil && !slices.Contains(in.Only, m.ID) {
		return dbq.SendTask{}, apierror.BadRequest("invalid_account_id", "account_id names no mailbox of this organization.")
	}
	if err != nil {
		return dbq.SendTask{}, err
	}
	if m.Status != "active" {
		return dbq.SendTask{}, apierror.BadRequest("mailbox_inactive", "The mailbox is "+m.Status+"; it sends nothing until it is active again.").
			WithFix("Set its status to active with PATCH /emails/{id}, or send from another mailbox.")
	}
	steps, err := campaign.Steps(ctx, tx, org, c.ID)
	if err != nil {
		return dbq.SendTask{}, err
	}
	step, err := emailStep(steps, in.StepID)
	if err != nil {
		return dbq.SendTask{}, err
	}
	contact, err := recipientContact(ctx, tx, org, c.ID, to)
	if err != nil {
		return dbq.SendTask{}, err
	}
	msg, err := compose.Compose(compose.Input{Campaign: &c.Campaign, Steps: steps, Step: step, Contact: contact, Sender: &m})
	if err != nil {
		return dbq.SendTask{}, err
	}
	if err := msg.Sendable(); err != nil {
		return dbq.SendTask{}, err
	}
	blocked, err := suppression.Blocked(ctx, tx, org, []string{to})
	if err != nil {
		return dbq.SendTask{}, err
	}
	if entry, ok := blocked[to]; ok {
		return dbq.SendTask{}, apierror.BadRequest("recipient_suppressed", fmt.Sprintf("%s is suppressed (%s).", to, entry.Value)).
			WithFix("Send the test to another address, or lift the suppression with DELETE /suppressions.")
	}
	files, err := compose.StepFiles(ctx, tx, org, c.ID, uuid.NullUUID{UUID: step.ID, Valid: true})
	if err != nil {
		return dbq.SendTask{}, err
	}
	task, err := sending.Enqueue(ctx, tx, jobs, m, sending.Message{Kind: sending.KindDirect, To: []string{to}, Subject: msg.Subject,
		Text: msg.Plain, HTML: msg.HTML, StepName: "Test email: " + cmp.Or(step.Name, fmt.Sprintf("step %d", step.Position+1)),
		Attachments: compose.IDs(files), Signed: msg.Signed})
	if err != nil {
		return dbq.SendTask{}, err
	}
	return task, audit.Record(ctx, tx, audit.Entry{Action: audit.ActionSend, Event: "campaign.test_email",
		EntityType: audit.EntityCampaign, EntityID: c.ID.String(), Metadata: map[string]any{"task_id": task.ID,
			"mailbox_id": m.ID, "recipient": to, "step_id": step.ID, "subject": msg.Subject}})
}

// emailStep is the step a test email sends: the one named (400 when it is not an email step of the campaign),
// else the first email step.
func emailStep(steps []campaign.Step, id uuid.NullUUID) (*campaign.Step, error) {
	for i := range steps {
		s := &steps[i]
		switch {
		case id.Valid && s.ID == id.UUID && s.Kind != campaign.StepEmail:
			return nil, apierror.BadRequest("invalid_step_id", fmt.Sprintf("step_id names step %d, a %s step; only email steps have a message.", s.Position+1, kindOf(*s)))
		case id.Valid && s.ID == id.UUID, !id.Valid && s.Kind == campaign.StepEmail:
			return s, nil
		}
	}
	if id.Valid {
		return nil, apierror.BadRequest("invalid_step_id", "step_id names no step of this campaign.")
	}
	return nil, apierror.BadRequest("campaign_invalid", "The campaign has no email step to send.").
		WithFix("Add an email step with POST /campaigns/{id}/steps.")
}

// recipientContact is who a test email is personalised for: the contact with its address, else the campaign's
// first lead, else the address alone.
func recipientContact(ctx context.Context, tx pgx.Tx, org, campaignID uuid.UUID, to string) (compose.Contact, error) {
	if c, ok, err := compose.ContactByEmail(ctx, tx, org, to); err != nil || ok {
		return c, err
	}
	if c, ok, err := compose.FirstLead(ctx, tx, org, campaignID); err != nil || ok {
		return c, err
	}
	c := compose.Contact{}
	c.Email = to
	return c, nil
}
