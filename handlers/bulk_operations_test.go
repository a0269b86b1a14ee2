package handlers_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/testkit/eventstest"
)

// orgBulkEvents lists org's bulk_operation.* events, oldest first.
func orgBulkEvents(t *testing.T, env *apitest.Env, org uuid.UUID) []eventstest.BulkEvent {
	t.Helper()
	return eventstest.BulkEvents(t, env.DB.Pool, org)
}

// requireBulkPair checks that events are one operation's started and completed, in that order, with the
// given kind and counts, and returns the operation id.
func requireBulkPair(t *testing.T, evs []eventstest.BulkEvent, kind string, total, succeeded, failed int64) uuid.UUID {
	t.Helper()
	require.Len(t, evs, 2)
	require.Equal(t, []string{"bulk_operation.started", "bulk_operation.completed"}, []string{evs[0].Type, evs[1].Type})
	started, done := evs[0].Data, evs[1].Data
	require.Equal(t, started.OperationID, done.OperationID, "one operation id across its events")
	require.Equal(t, kind, started.Operation)
	require.Equal(t, "started", started.Status)
	require.Equal(t, total, started.Total)
	require.Nil(t, started.FinishedAt)
	require.Equal(t, "completed", done.Status)
	require.Equal(t, [3]int64{total, succeeded, failed}, [3]int64{done.Total, done.Succeeded, done.Failed})
	require.NotNil(t, done.FinishedAt)
	require.Empty(t, done.Error)
	return started.OperationID
}

func TestBulkWritesRaiseBulkOperationEvents(t *testing.T) {
	t.Parallel()
	f := newSearchFixture(t)
	ctx := context.Background()

	_, err := f.c.ContactsBulkUpdate(ctx, &api.ContactBulkUpdateRequest{Contacts: []uuid.UUID{f.ada.ID, f.cy.ID, uuid.New()},
		Subscribe: api.NewOptBool(false)}, api.ContactsBulkUpdateParams{})
	require.NoError(t, err)
	update := requireBulkPair(t, orgBulkEvents(t, f.env, f.org), events.BulkContactsUpdate, 2, 2, 0)

	// A write refused inside its transaction changed nothing and says why once, as failed.
	_, err = f.c.ContactsBulkUpdate(ctx, &api.ContactBulkUpdateRequest{Contacts: []uuid.UUID{f.ada.ID},
		AddCampaigns: []uuid.UUID{uuid.New()}}, api.ContactsBulkUpdateParams{})
	requireAPIError(t, err, http.StatusBadRequest, "unknown_campaign")
	evs := orgBulkEvents(t, f.env, f.org)
	require.Len(t, evs, 3)
	require.Equal(t, "bulk_operation.failed", evs[2].Type)
	require.NotEqual(t, update, evs[2].Data.OperationID)
	require.Equal(t, events.BulkContactsUpdate, evs[2].Data.Operation)
	require.Contains(t, evs[2].Data.Error, "campaign")
	require.Zero(t, evs[2].Data.Succeeded)

	require.NoError(t, f.c.ContactsBulkDelete(ctx, api.NewUUIDArrayContactsBulkDeleteReq([]uuid.UUID{f.ada.ID, f.bob.ID}),
		api.ContactsBulkDeleteParams{}))
	requireBulkPair(t, orgBulkEvents(t, f.env, f.org)[3:], events.BulkContactsDelete, 2, 2, 0)
}

func TestContactImportRaisesBulkOperationEvents(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	file := "email\nok1@example.com\nok2@example.com\nnot-an-email\n"
	opts := impOpts{Mapping: impCols("email"), Dedup: "skip", HasHeader: true}
	res, err := impCommit(c, "three.csv", file, opts.String())
	require.NoError(t, err)
	require.Equal(t, 3, res.Total)
	requireBulkPair(t, orgBulkEvents(t, env, boot.OrganizationID), events.BulkContactsImport, 3, 2, 1)

	opts.CampaignIDs = []string{uuid.NewString()}
	_, err = impCommit(c, "three.csv", file, opts.String())
	requireAPIError(t, err, http.StatusBadRequest, "unknown_campaign")
	evs := orgBulkEvents(t, env, boot.OrganizationID)
	require.Len(t, evs, 3, "the refused import raised failed alone")
	require.Equal(t, "bulk_operation.failed", evs[2].Type)
	require.Equal(t, events.BulkContactsImport, evs[2].Data.Operation)
	require.NotEmpty(t, evs[2].Data.Error)
}
