package activity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// The activity types contact_activities accepts (its CHECK constraint). The activity feed shows all but the
// category changes, which only the timeline shows; the timeline shows email events, notes added, contact
// creation and campaign and category changes.
const (
	EmailSent        = "email_sent"
	EmailOpened      = "email_opened"
	EmailClicked     = "email_clicked"
	EmailReplied     = "email_replied"
	EmailBounced     = "email_bounced"
	NoteAdded        = "note_added"
	NoteUpdated      = "note_updated"
	DealCreated      = "deal_created"
	DealStageChanged = "deal_stage_changed"
	DealWon          = "deal_won"
	DealLost         = "deal_lost"
	TaskCreated      = "task_created"
	TaskCompleted    = "task_completed"
	ContactCreated   = "contact_created"
	ContactUpdated   = "contact_updated"
	CampaignAdded    = "campaign_added"
	CampaignRemoved  = "campaign_removed"
	CategoryAdded    = "category_added"
	CategoryRemoved  = "category_removed"
)

// types is the set the constants above spell, checked before the database sees a value.
var types = map[string]bool{
	EmailSent: true, EmailOpened: true, EmailClicked: true, EmailReplied: true, EmailBounced: true,
	NoteAdded: true, NoteUpdated: true, DealCreated: true, DealStageChanged: true, DealWon: true, DealLost: true,
	TaskCreated: true, TaskCompleted: true, ContactCreated: true, ContactUpdated: true,
	CampaignAdded: true, CampaignRemoved: true, CategoryAdded: true, CategoryRemoved: true,
}

// Entry describes one event that happened to each of ContactIDs.
//
// Metadata keys the timeline reads, by type: note_added {note_id} (or {content} for a note that lives
// nowhere else); contact_created {source}; campaign_added and campaign_removed {campaign_id, campaign_name};
// category_added and category_removed {category_id, category_title}; email events {task_id, subject,
// campaign_id, campaign_name, step_id, step_name, email_account_id, email_account_email,
// email_account_name} (an email event naming one of the contact's send tasks is shown once, from the task).
type Entry struct {
	// ContactIDs are the contacts the event happened to; they must exist in the transaction's organization.
	// None records nothing.
	ContactIDs []uuid.UUID
	// UserID is the person who acted (an API key acts for its owner); invalid for the system.
	UserID uuid.NullUUID
	// Type is one of the constants above.
	Type string
	// Metadata holds the event's details (see above); nil is an empty object.
	Metadata map[string]any
}

var queries = dbq.New()

// Record writes e for every contact in tx, which must be organization-scoped (db.WithOrgTx): one row per
// contact, ids from UUIDv7, all stamped with the transaction's time. An unknown type is an error before
// anything is written.
func Record(ctx context.Context, tx pgx.Tx, e Entry) error {
	if !types[e.Type] {
		return fmt.Errorf("activity: unknown type %q", e.Type)
	}
	if len(e.ContactIDs) == 0 {
		return nil
	}
	org, ok := db.OrgID(ctx)
	if !ok {
		return errors.New("activity: Record outside an organization-scoped transaction")
	}
	meta := []byte("{}")
	if e.Metadata != nil {
		var err error
		if meta, err = json.Marshal(e.Metadata); err != nil {
			return fmt.Errorf("activity: encode metadata: %w", err)
		}
	}
	ids := make([]uuid.UUID, len(e.ContactIDs))
	for i := range ids {
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		ids[i] = id
	}
	err := queries.ContactActivityInsert(ctx, tx, dbq.ContactActivityInsertParams{
		OrganizationID: org, UserID: e.UserID, ActivityType: e.Type, Metadata: meta,
		Ids: ids, ContactIds: e.ContactIDs,
	})
	if err != nil {
		return fmt.Errorf("activity: record %s: %w", e.Type, err)
	}
	return nil
}
