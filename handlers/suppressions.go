package handlers

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/audience/suppression"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Suppressions implements the organization's suppression list: addresses and domains no send path may mail,
// whatever a campaign or an agent policy says. Reading needs READ_CONTACTS / view_contacts, changing it
// WRITE_CONTACTS / manage_contacts (the route table checks both).
type Suppressions struct {
	pool    *pgxpool.Pool
	cursors *pagination.Cursors
	queries *dbq.Queries
}

// NewSuppressions builds the suppression operations; list cursors are signed with a key derived from secret.
func NewSuppressions(pool *pgxpool.Pool, secret []byte) *Suppressions {
	return &Suppressions{pool: pool, cursors: pagination.NewCursors(secret), queries: dbq.New()}
}

// Limits of the suppression operations.
const (
	sortSuppressions      = "suppressions:created_at:desc"
	maxSuppressionReason  = 500
	maxSuppressionsPerAdd = 5000
	maxSuppressionQuery   = 320
)

func suppressionReason(v string) (string, error) {
	v = strings.TrimSpace(v)
	if len([]rune(v)) > maxSuppressionReason {
		return "", apierror.BadRequest("invalid_reason", fmt.Sprintf("reason must be at most %d characters.", maxSuppressionReason))
	}
	return v, nil
}

// DeliverabilityOpsAddSuppressions suppresses up to 5000 addresses or domains. Values that are not an address
// or a domain, repeats within the request and values already suppressed are skipped and named.
func (h *Suppressions) DeliverabilityOpsAddSuppressions(ctx context.Context, req *api.AddSuppressionsRequest) (*api.AddSuppressionsResult, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	if len(req.Entries) > maxSuppressionsPerAdd {
		return nil, apierror.BadRequest("too_many_entries", fmt.Sprintf("Send at most %d entries per call.", maxSuppressionsPerAdd))
	}
	fallback, err := suppressionReason(req.Reason.Value)
	if err != nil {
		return nil, err
	}
	args := dbq.SuppressionAddParams{OrganizationID: org, Source: "manual"}
	skipped := []string{}
	seen := map[string]bool{}
	raw := map[string]string{} // normalized value -> the value as sent, to name skipped values as the caller wrote them
	for _, e := range req.Entries {
		kind, value, ok := suppression.Normalize(e.Value)
		if !ok || seen[string(kind)+":"+value] {
			skipped = append(skipped, e.Value)
			continue
		}
		reason := fallback
		if r, set := e.Reason.Get(); set {
			if reason, err = suppressionReason(r); err != nil {
				return nil, err
			}
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, err
		}
		seen[string(kind)+":"+value], raw[value] = true, e.Value
		args.Ids = append(args.Ids, id)
		args.Kinds = append(args.Kinds, string(kind))
		args.SuppressedValues = append(args.SuppressedValues, value)
		args.Reasons = append(args.Reasons, reason)
	}
	added := 0
	if len(args.Ids) > 0 {
		err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
			values, err := h.queries.SuppressionAdd(ctx, tx, args)
			if err != nil {
				return err
			}
			added = len(values)
			fresh := make(map[string]bool, len(values))
			for _, v := range values {
				fresh[v] = true
			}
			for _, v := range args.SuppressedValues {
				if !fresh[v] {
					skipped = append(skipped, raw[v]) // already suppressed
				}
			}
			if added == 0 {
				return nil
			}
			return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "suppressions.added", EntityType: audit.EntitySuppression,
				Metadata: map[string]any{"count": added, "values": firstValues(values, 20)}})
		})
		if err != nil {
			return nil, err
		}
	}
	return &api.AddSuppressionsResult{Added: api.NewOptInt(added), Skipped: skipped}, nil
}

// firstValues keeps an audit entry small: at most n values.
func firstValues(values []string, n int) []string {
	if len(values) > n {
		return values[:n]
	}
	return values
}

// suppressedRecipientOf maps an entry; email is the suppressed value (an address, or the domain).
func suppressedRecipientOf(s dbq.Suppression) api.SuppressedRecipient {
	out := api.SuppressedRecipient{
		ID: api.NewOptUUID(s.ID), OrganizationID: api.NewOptUUID(s.OrganizationID), Email: api.NewOptString(s.Value),
		Kind: api.NewOptSuppressedRecipientKind(api.SuppressedRecipientKind(s.Kind)), Reason: api.NewOptString(s.Reason),
		Source:    api.NewOptSuppressedRecipientSource(api.SuppressedRecipientSource(s.Source)),
		Metadata:  api.NewOptSuppressedRecipientMetadata(api.SuppressedRecipientMetadata{}),
		CreatedAt: api.NewOptDateTime(s.CreatedAt), UpdatedAt: api.NewOptDateTime(s.UpdatedAt),
	}
	out.CampaignID.SetToNull()
	if s.CampaignID.Valid {
		out.CampaignID.SetTo(s.CampaignID.UUID)
	}
	out.ExpiresAt = optNilTime(s.ExpiresAt)
	return out
}

// DeliverabilityOpsListSuppressions lists the entries in force, newest first; q matches part of the value.
func (h *Suppressions) DeliverabilityOpsListSuppressions(ctx context.Context, params api.DeliverabilityOpsListSuppressionsParams) (*api.SuppressionListResult, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, 50, 500, true)
	if err != nil {
		return nil, err
	}
	var q *string
	if v, ok := params.Q.Get(); ok && strings.TrimSpace(v) != "" {
		if len(v) > maxSuppressionQuery {
			return nil, apierror.BadRequest("invalid_query", fmt.Sprintf("q must be at most %d characters.", maxSuppressionQuery))
		}
		escaped := contacts.LikeEscape(strings.ToLower(strings.TrimSpace(v)))
		q = &escaped
	}
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortSuppressions, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]dbq.Suppression, error) {
			args := dbq.SuppressionListParams{OrganizationID: org, Q: q, RowLimit: rowLimit}
			args.BeforeCreatedAt, args.BeforeID = after.bounds()
			return h.queries.SuppressionList(ctx, tx, args)
		},
		func(s dbq.Suppression) timeKey { return timeKey{At: s.CreatedAt, ID: s.ID} })
	if err != nil {
		return nil, err
	}
	out := &api.SuppressionListResult{Data: make([]api.SuppressedRecipient, len(page.Data))}
	for i, s := range page.Data {
		out.Data[i] = suppressedRecipientOf(s)
	}
	info := api.SuppressionListResultPagination{HasMore: api.NewOptBool(page.HasMore)}
	info.NextCursor = optNilStringPtr(page.NextCursor)
	out.Pagination = api.NewOptSuppressionListResultPagination(info)
	return out, nil
}

// DeliverabilityOpsRemoveSuppression lets an address or domain receive mail again.
func (h *Suppressions) DeliverabilityOpsRemoveSuppression(ctx context.Context, params api.DeliverabilityOpsRemoveSuppressionParams) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		gone, err := h.queries.SuppressionDelete(ctx, tx, dbq.SuppressionDeleteParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "Suppression")
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "suppression.removed", EntityType: audit.EntitySuppression, EntityID: params.ID.String(),
			Metadata: map[string]any{"kind": gone.Kind, "value": gone.Value}})
	})
}
