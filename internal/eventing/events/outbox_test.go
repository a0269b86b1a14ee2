package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

type bundle struct {
	db     *dbtest.DB
	org    uuid.UUID
	outbox *events.Outbox
}

func setup(t *testing.T) *bundle {
	t.Helper()
	d := dbtest.New(t)
	res, err := accounts.Bootstrap(context.Background(), d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	inserter, err := river.NewClient(riverpgxv5.New(d.Pool), &river.Config{})
	require.NoError(t, err)
	return &bundle{db: d, org: res.OrganizationID, outbox: events.NewOutbox(inserter)}
}

func (b *bundle) count(t *testing.T, sql string) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.OwnerPool(t).QueryRow(context.Background(), sql).Scan(&n))
	return n
}

// write performs a change that emits an event and records an audit entry in one transaction.
func (b *bundle) write(ctx context.Context, fail error) (uuid.UUID, error) {
	var id uuid.UUID
	err := db.WithOrgTx(ctx, b.db.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if id, err = b.outbox.Emit(ctx, tx, "contact.created", map[string]any{"contact_email": "a@b.example"}); err != nil {
			return err
		}
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "contact.created", EntityType: "contact", EntityID: "c1"}); err != nil {
			return err
		}
		return fail
	})
	return id, err
}

func TestOutboxAndAuditRollBackWithTheChange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	audits := b.count(t, "SELECT count(*) FROM audit_log")

	_, err := b.write(ctx, errors.New("the change failed"))
	require.EqualError(t, err, "the change failed")
	require.Zero(t, b.count(t, "SELECT count(*) FROM event_outbox"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'event_dispatch'"))
	require.Equal(t, audits, b.count(t, "SELECT count(*) FROM audit_log"))

	id, err := b.write(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM event_outbox WHERE dispatched_at IS NULL"))
	require.Equal(t, audits+1, b.count(t, "SELECT count(*) FROM audit_log"))

	var args events.DispatchArgs
	var raw []byte
	require.NoError(t, b.db.OwnerPool(t).QueryRow(ctx, "SELECT args FROM river_job WHERE kind = 'event_dispatch'").Scan(&raw))
	require.NoError(t, json.Unmarshal(raw, &args))
	require.Equal(t, events.DispatchArgs{OrganizationID: b.org, EventID: id}, args)
}

func TestEmitNeedsAnOrganizationScope(t *testing.T) {
	t.Parallel()
	b := setup(t)
	err := db.WithTx(context.Background(), b.db.Pool, func(ctx context.Context, tx pgx.Tx) error {
		_, err := b.outbox.Emit(ctx, tx, "contact.created", nil)
		return err
	})
	require.ErrorContains(t, err, "outside an organization-scoped transaction")
}

func TestEmitManyRecordsEveryEventWithItsDispatchInTheCallersTransaction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var ids []uuid.UUID
	err := db.WithOrgTx(ctx, b.db.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		ids, err = b.outbox.EmitMany(ctx, tx, events.CampaignEmailOpened, []any{map[string]any{"n": 1}, map[string]any{"n": 2}})
		return err
	})
	require.NoError(t, err)
	require.Len(t, ids, 2)
	for i, id := range ids {
		var data []byte
		require.NoError(t, b.db.OwnerPool(t).QueryRow(ctx, `SELECT data FROM event_outbox WHERE organization_id = $1 AND id = $2
			AND event_type = 'campaign.email_opened'`, b.org, id).Scan(&data))
		require.JSONEq(t, fmt.Sprintf(`{"n":%d}`, i+1), string(data), "the ids follow the order of the data")
		require.Equal(t, 1, b.count(t, fmt.Sprintf(`SELECT count(*) FROM river_job WHERE kind = 'event_dispatch'
			AND args->>'event_id' = '%s'`, id)))
	}

	err = db.WithOrgTx(ctx, b.db.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := b.outbox.EmitMany(ctx, tx, events.CampaignEmailClicked, []any{map[string]any{}}); err != nil {
			return err
		}
		return errors.New("the change failed")
	})
	require.EqualError(t, err, "the change failed")
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM event_outbox"), "events roll back with the change")
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'event_dispatch'"))

	err = db.WithOrgTx(ctx, b.db.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := b.outbox.EmitMany(ctx, tx, "campaign.email_teleported", []any{map[string]any{}})
		return err
	})
	require.ErrorContains(t, err, "not an event of the catalog")
}

type recordingConsumer struct {
	seen []events.Event
	fail error
}

func (c *recordingConsumer) Name() string { return "recording" }

func (c *recordingConsumer) Consume(_ context.Context, _ pgx.Tx, ev events.Event) error {
	if c.fail != nil {
		return c.fail
	}
	c.seen = append(c.seen, ev)
	return nil
}

func TestDispatchDeliversOnceAndRetriesFailures(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	id, err := b.write(ctx, nil)
	require.NoError(t, err)
	args := events.DispatchArgs{OrganizationID: b.org, EventID: id}

	consumer := &recordingConsumer{fail: errors.New("webhook store down")}
	d := events.NewDispatcher(b.db.Pool, consumer)
	require.ErrorContains(t, d.Dispatch(ctx, args), "webhook store down")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM event_outbox WHERE dispatched_at IS NULL"), "a failed consumer leaves the event pending")

	consumer.fail = nil
	require.NoError(t, d.Dispatch(ctx, args))
	require.NoError(t, d.Dispatch(ctx, args), "a retried job is a no-op")
	require.Len(t, consumer.seen, 1)
	ev := consumer.seen[0]
	require.Equal(t, id, ev.ID)
	require.Equal(t, b.org, ev.OrganizationID)
	require.Equal(t, "contact.created", ev.Type)
	require.JSONEq(t, `{"contact_email":"a@b.example"}`, string(ev.Data))
	require.Zero(t, b.count(t, "SELECT count(*) FROM event_outbox WHERE dispatched_at IS NULL"))
}

func TestEmitRefusesTypesOutsideTheCatalog(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, bad := range []events.Type{"contact.exploded", "", events.WebhookTest} {
		err := db.WithOrgTx(ctx, b.db.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
			_, err := b.outbox.Emit(ctx, tx, bad, nil)
			return err
		})
		require.ErrorContains(t, err, "not an event of the catalog", bad)
	}
}

func TestCatalogMatchesTheContract(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../../openapi/openapi.yaml")
	require.NoError(t, err)
	var doc struct {
		Webhooks   map[string]any `yaml:"webhooks"`
		Components struct {
			Schemas struct {
				WebhookEventType struct {
					Enum []string `yaml:"enum"`
				} `yaml:"WebhookEventType"`
				WebhookEventCategory struct {
					Enum []string `yaml:"enum"`
				} `yaml:"WebhookEventCategory"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	var types []string
	categories := map[string]bool{}
	firehose := 0
	for _, i := range events.Catalog {
		types = append(types, string(i.Type))
		categories[string(i.Category)] = true
		require.NotEmpty(t, i.Description)
		got, ok := events.Lookup(i.Type)
		require.True(t, ok)
		require.Equal(t, i, got)
		if i.Firehose {
			firehose++
		}
		if i.Type != events.WebhookTest {
			require.NotZero(t, i.Scope, "%s has an OAuth-app family scope", i.Type)
		}
	}
	require.Equal(t, doc.Components.Schemas.WebhookEventType.Enum, types, "same events, same order")
	require.Len(t, categories, len(doc.Components.Schemas.WebhookEventCategory.Enum))
	require.Equal(t, 9, firehose, "part 1 marks nine firehose events")
	// The payload shapes part 1 spells out, and those of the events produced so far, are documented.
	for _, documented := range []events.Type{events.ContactCreated, events.ContactUpdated, events.CRMTaskUpdated, events.FormSubmitted,
		events.CampaignEmailClicked, events.CampaignUnsubscribed, events.TeamMemberInvited, events.TeamMemberRemoved,
		events.RoleCreated, events.RoleUpdated, events.RoleDeleted, events.SettingsUpdated, events.WebhookTest,
		events.BulkOperationStarted, events.BulkOperationCompleted, events.BulkOperationFailed} {
		require.Contains(t, doc.Webhooks, string(documented))
	}
	for name := range doc.Webhooks {
		_, ok := events.Lookup(events.Type(name))
		require.True(t, ok, "webhooks.%s is a catalog event", name)
	}
}

// TestEveryTypeConstantIsInTheCatalog reads the Type constants producers use from the source, so a constant
// added without its catalog entry fails here rather than at its first Emit.
func TestEveryTypeConstantIsInTheCatalog(t *testing.T) {
	t.Parallel()
	file, err := parser.ParseFile(token.NewFileSet(), "catalog.go", nil, 0)
	require.NoError(t, err)
	n := 0
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Type" {
				continue
			}
			for _, v := range vs.Values {
				lit := v.(*ast.BasicLit)
				name, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				_, ok := events.Lookup(events.Type(name))
				require.True(t, ok, "%s is in the catalog", name)
				n++
			}
		}
	}
	require.Equal(t, len(events.Catalog), n)
}
