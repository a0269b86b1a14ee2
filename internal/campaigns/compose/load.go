package compose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/template"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

var queries = dbq.New()

// contactRow is the columns composing reads of a contact (every Compose* contact query answers them).
type contactRow = dbq.ComposeContactRow

// ContactOf maps a contact row to the recipient composing sees. Custom fields are strings as the API stores
// them; a value stored otherwise (imported JSON) prints as JSON does.
func ContactOf(r contactRow) (Contact, error) {
	c := Contact{ID: r.ID, Contact: template.Contact{FirstName: r.FirstName, LastName: r.LastName, Email: r.Email,
		Company: r.Company, Phone: r.Phone}}
	var custom map[string]json.RawMessage
	if err := json.Unmarshal(r.CustomFields, &custom); err != nil {
		return Contact{}, fmt.Errorf("compose: custom_fields of contact %s: %w", r.ID, err)
	}
	if len(custom) > 0 {
		c.Custom = make(map[string]string, len(custom))
	}
	for k, raw := range custom {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			c.Custom[k] = s
		} else if string(raw) != "null" {
			c.Custom[k] = string(raw)
		}
	}
	return c, nil
}

// ContactNotFound is the answer for an unknown contact id (a foreign one included).
func ContactNotFound() error { return apierror.NotFound("contact_not_found", "Contact not found.") }

// LoadContact reads a stored contact of org; an unknown id is 404 contact_not_found.
func LoadContact(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (Contact, error) {
	row, err := queries.ComposeContact(ctx, tx, dbq.ComposeContactParams{OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Contact{}, ContactNotFound()
	}
	if err != nil {
		return Contact{}, err
	}
	return ContactOf(row)
}

// ContactByEmail reads the contact of an address (normalized as contacts store it); ok is false when none has it.
func ContactByEmail(ctx context.Context, tx pgx.Tx, org uuid.UUID, email string) (c Contact, ok bool, err error) {
	row, err := queries.ComposeContactByEmail(ctx, tx, dbq.ComposeContactByEmailParams{OrganizationID: org, Email: email})
	if errors.Is(err, pgx.ErrNoRows) {
		return Contact{}, false, nil
	}
	if err != nil {
		return Contact{}, false, err
	}
	c, err = ContactOf(contactRow(row))
	return c, err == nil, err
}

// FirstLead reads the campaign's first lead; ok is false when it has none.
func FirstLead(ctx context.Context, tx pgx.Tx, org, campaignID uuid.UUID) (c Contact, ok bool, err error) {
	row, err := queries.ComposeFirstLead(ctx, tx, dbq.ComposeFirstLeadParams{OrganizationID: org, CampaignID: campaignID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Contact{}, false, nil
	}
	if err != nil {
		return Contact{}, false, err
	}
	c, err = ContactOf(contactRow(row))
	return c, err == nil, err
}

// FirstSender reads the active mailbox a campaign sends from first (see the ComposeFirstSender query): its
// explicit pool, then its mailbox tags, then, for the tags strategy with neither, the organization's first
// mailbox; with no campaign, the organization's first. only, when not nil, limits the choice (a mailbox-scoped
// API key). ok is false when no mailbox qualifies.
func FirstSender(ctx context.Context, tx pgx.Tx, org uuid.UUID, c *campaign.Campaign, only []uuid.UUID) (m dbq.Mailbox, ok bool, err error) {
	p := dbq.ComposeFirstSenderParams{OrganizationID: org, OnlyIds: only, TagIds: []uuid.UUID{}, Fallback: true}
	if c != nil {
		p.CampaignID, p.TagIds = c.ID, c.EmailTags
		p.Fallback = c.SenderStrategy == campaign.StrategyTags && len(c.EmailTags) == 0
	}
	m, err = queries.ComposeFirstSender(ctx, tx, p)
	if errors.Is(err, pgx.ErrNoRows) {
		return dbq.Mailbox{}, false, nil
	}
	return m, err == nil, err
}

// Attachment is a file a step sends.
type Attachment struct {
	ID                 uuid.UUID
	Filename, MimeType string
	Size               int32
}

// StepFiles reads the files a step sends: the campaign's own and the step's (step invalid: the campaign's
// only), in the order they were added. The send pipeline reads their content by id when it builds the message.
func StepFiles(ctx context.Context, tx pgx.Tx, org, campaignID uuid.UUID, step uuid.NullUUID) ([]Attachment, error) {
	rows, err := queries.ComposeStepFiles(ctx, tx, dbq.ComposeStepFilesParams{OrganizationID: org, CampaignID: campaignID, StepID: step})
	if err != nil {
		return nil, err
	}
	out := make([]Attachment, len(rows))
	for i, r := range rows {
		out[i] = Attachment{ID: r.ID, Filename: r.Filename, MimeType: r.MimeType, Size: r.Size}
	}
	return out, nil
}

// IDs are the attachments' ids, as a send task carries them.
func IDs(files []Attachment) []uuid.UUID {
	out := make([]uuid.UUID, len(files))
	for i, f := range files {
		out[i] = f.ID
	}
	return out
}
