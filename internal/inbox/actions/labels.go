package actions

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// SetThreadLabels makes the categories on a thread exactly categories (empty clears them) and returns those
// now on it. Ids that are not the organization's labels of kind category are dropped without an error, so a
// client replaying a set after a category was deleted, or holding ids of another organization, gets the set
// that could be applied. Setting the same set again changes nothing.
func SetThreadLabels(ctx context.Context, tx pgx.Tx, s Scope, threadID string, categories []uuid.UUID) ([]dbq.InboxActionThreadLabelsRow, error) {
	t, err := thread(ctx, tx, s, threadID)
	if err != nil {
		return nil, err
	}
	if categories == nil {
		categories = []uuid.UUID{}
	}
	if err := queries.InboxActionThreadLabelsDrop(ctx, tx, dbq.InboxActionThreadLabelsDropParams{OrganizationID: s.Org, ThreadID: t.ID,
		LabelIds: categories}); err != nil {
		return nil, err
	}
	if err := queries.InboxActionThreadLabelsAdd(ctx, tx, dbq.InboxActionThreadLabelsAddParams{OrganizationID: s.Org, ThreadID: t.ID,
		LabelIds: categories}); err != nil {
		return nil, err
	}
	return queries.InboxActionThreadLabels(ctx, tx, dbq.InboxActionThreadLabelsParams{OrganizationID: s.Org, ThreadID: t.ID})
}
