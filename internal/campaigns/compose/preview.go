package compose

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/template"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// PreviewInput is what POST /campaign-template-preview renders.
type PreviewInput struct {
	// Content is the text to render; all empty with a step renders the step's own.
	Content Content
	// Campaign gives the context (nil: none); StepID, which needs a campaign, the step.
	Campaign *campaign.Campaign
	StepID   uuid.NullUUID
	// ContactID names a stored contact and Inline gives one in the request; at most one of them is set.
	ContactID uuid.NullUUID
	Inline    *template.Contact
	// MailboxID is the sender (invalid: the campaign's first sender, else the organization's first mailbox).
	MailboxID uuid.NullUUID
	// Only limits the mailboxes the caller may use (nil: every mailbox of the organization).
	Only []uuid.UUID
}

// Preview is a message composed for a preview, with the files its step sends.
type Preview struct {
	Message
	Attachments []Attachment
}

// StepNotFound is the answer for a step id that is not one of the campaign's steps.
func StepNotFound() error {
	return apierror.NotFound("step_not_found", "Step not found in this campaign.")
}

// MailboxNotFound is the answer for an unknown mailbox id, or one the caller may not use.
func MailboxNotFound() error { return apierror.NotFound("mailbox_not_found", "Mailbox not found.") }

// RenderPreview composes in for a preview: nothing is stored or sent, and unresolved variables are listed
// rather than refused. Unknown ids are 404; content that does not compile is 400 invalid_template.
func RenderPreview(ctx context.Context, tx pgx.Tx, org uuid.UUID, in PreviewInput) (Preview, error) {
	if in.ContactID.Valid && in.Inline != nil {
		return Preview{}, apierror.BadRequest("invalid_contact", "Send contact_id or contact, not both.")
	}
	if in.StepID.Valid && in.Campaign == nil {
		return Preview{}, apierror.BadRequest("invalid_step_id", "step_id needs the campaign_id of its campaign.")
	}
	var ci Input
	if in.Inline != nil {
		ci.Contact.Contact = *in.Inline
	}
	if in.ContactID.Valid {
		c, err := LoadContact(ctx, tx, org, in.ContactID.UUID)
		if err != nil {
			return Preview{}, err
		}
		ci.Contact = c
	}
	var files []Attachment
	if c := in.Campaign; c != nil {
		ci.Campaign = &c.Campaign
		steps, err := campaign.Steps(ctx, tx, org, c.ID)
		if err != nil {
			return Preview{}, err
		}
		ci.Steps = steps
		if in.StepID.Valid {
			i := slices.IndexFunc(steps, func(s campaign.Step) bool { return s.ID == in.StepID.UUID })
			if i < 0 {
				return Preview{}, StepNotFound()
			}
			ci.Step = &steps[i]
		}
		if files, err = StepFiles(ctx, tx, org, c.ID, in.StepID); err != nil {
			return Preview{}, err
		}
	}
	if in.Content != (Content{}) || ci.Step == nil {
		content := in.Content
		ci.Content = &content
	}
	sender, err := previewSender(ctx, tx, org, in)
	if err != nil {
		return Preview{}, err
	}
	ci.Sender = sender
	if ci.Step != nil && ci.Step.Kind != campaign.StepEmail && ci.Content != nil {
		// Content previewed in the place of a non-email step: render it, without the step's thread.
		ci.Step = nil
	}
	m, err := Compose(ci)
	if err != nil {
		return Preview{}, err
	}
	return Preview{Message: m, Attachments: files}, nil
}

// previewSender is the mailbox a preview shows as its sender: the one named (404 when it is unknown or not the
// caller's to use), else the campaign's first sender, else the organization's first mailbox; nil when there is
// none.
func previewSender(ctx context.Context, tx pgx.Tx, org uuid.UUID, in PreviewInput) (*dbq.Mailbox, error) {
	if in.MailboxID.Valid {
		m, err := queries.MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: org, ID: in.MailboxID.UUID})
		if errors.Is(err, pgx.ErrNoRows) || err == nil && in.Only != nil && !slices.Contains(in.Only, m.ID) {
			return nil, MailboxNotFound()
		}
		if err != nil {
			return nil, err
		}
		return &m, nil
	}
	m, ok, err := FirstSender(ctx, tx, org, in.Campaign, in.Only)
	if err == nil && !ok && in.Campaign != nil {
		m, ok, err = FirstSender(ctx, tx, org, nil, in.Only)
	}
	if err != nil || !ok {
		return nil, err
	}
	return &m, nil
}
