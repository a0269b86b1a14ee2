package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// AuditLogs serves the organization's audit trail. Entries are written by audit.Record inside the transaction
// of each change; this side only reads them, which is all the application role may do with audit_log.
type AuditLogs struct {
	pool    *pgxpool.Pool
	queries *dbq.Queries
}

// NewAuditLogs builds the audit log handlers over the application pool.
func NewAuditLogs(pool *pgxpool.Pool) *AuditLogs {
	return &AuditLogs{pool: pool, queries: dbq.New()}
}

// Audit log page sizes (part 3, "Limits"): outside the range is refused, not clamped.
const (
	auditLimitMin     = 10
	auditLimitMax     = 200
	auditLimitDefault = 50
)

// AnalyticsAuditLogsList lists the caller's organization's audit entries, newest first. The cursor is the id of
// the previous page's last entry; it must name an entry of this organization.
func (h *AuditLogs) AnalyticsAuditLogsList(ctx context.Context, params api.AnalyticsAuditLogsListParams) (*api.AuditLogList, error) {
	org, err := teamCaller(ctx, auth.ReadAuditLogs, "READ_AUDIT_LOGS", auth.ViewAnalytics)
	if err != nil {
		return nil, err
	}
	args, err := auditListArgs(org, params)
	if err != nil {
		return nil, err
	}
	limit := int(args.RowLimit) - 1
	rows, hasMore, err := keysetRows(ctx, h.pool, org, limit,
		func(ctx context.Context, tx pgx.Tx, rowLimit int32) ([]dbq.AuditLogListRow, error) {
			if c, ok := params.Cursor.Get(); ok {
				at, err := h.queries.AuditLogPosition(ctx, tx, dbq.AuditLogPositionParams{OrganizationID: org, ID: c})
				if errors.Is(err, pgx.ErrNoRows) {
					return nil, apierror.BadRequest("invalid_cursor", "cursor is not the id of an entry of this audit log.")
				}
				if err != nil {
					return nil, err
				}
				args.BeforeCreatedAt, args.BeforeID = &at, uuid.NullUUID{UUID: c, Valid: true}
			}
			args.RowLimit = rowLimit
			return h.queries.AuditLogList(ctx, tx, args)
		}, nil)
	if err != nil {
		return nil, err
	}
	out := &api.AuditLogList{Data: make([]api.AuditLog, len(rows)), Pagination: api.Pagination{HasMore: hasMore}}
	out.Pagination.NextCursor.SetToNull()
	if hasMore {
		out.Pagination.NextCursor.SetTo(rows[len(rows)-1].ID.String())
	}
	for i, r := range rows {
		if out.Data[i], err = auditEntryOf(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// auditListArgs maps the list's query parameters onto the query. The handler checks the limit itself as well
// as the contract: agent tools call this method directly, past ogen's parameter validation.
func auditListArgs(org uuid.UUID, params api.AnalyticsAuditLogsListParams) (dbq.AuditLogListParams, error) {
	limit := params.Limit.Or(auditLimitDefault)
	if limit < auditLimitMin || limit > auditLimitMax {
		return dbq.AuditLogListParams{}, apierror.BadRequest("invalid_limit", "limit must be 10 to 200.")
	}
	args := dbq.AuditLogListParams{OrganizationID: org, RowLimit: int32(limit + 1)}
	if v, ok := params.ActorID.Get(); ok {
		args.ActorID = uuid.NullUUID{UUID: v, Valid: true}
	}
	if v, ok := params.EntityID.Get(); ok {
		s := v.String()
		args.EntityID = &s
	}
	if v, ok := params.EntityType.Get(); ok && v != "" {
		args.EntityType = &v
	}
	if v, ok := params.Action.Get(); ok && v != "" {
		args.Action = &v
	}
	start, startSet := params.StartDate.Get()
	end, endSet := params.EndDate.Get()
	switch {
	case startSet || endSet:
		if startSet {
			from, err := auditTime(start, false)
			if err != nil {
				return args, err
			}
			args.CreatedFrom = &from
		}
		if endSet {
			before, err := auditTime(end, true)
			if err != nil {
				return args, err
			}
			args.CreatedBefore = &before
		}
	case params.Date.Set:
		day := auditDay(params.Date.Value)
		next := day.AddDate(0, 0, 1)
		args.CreatedFrom, args.CreatedBefore = &day, &next
	}
	if args.CreatedFrom != nil && args.CreatedBefore != nil && !args.CreatedFrom.Before(*args.CreatedBefore) {
		return args, apierror.BadRequest("invalid_date_range", "start_date must be before end_date.")
	}
	return args, nil
}

// auditTime reads a start_date or end_date: RFC 3339, or a UTC day. An end bound is inclusive, so it becomes
// the exclusive bound just after it: the next microsecond (Postgres' resolution) or the next day.
func auditTime(v string, end bool) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		if end {
			return t.Truncate(time.Microsecond).Add(time.Microsecond), nil
		}
		return t, nil
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, apierror.BadRequest("invalid_date", "start_date and end_date must be RFC 3339 date-times or YYYY-MM-DD dates.")
	}
	if end {
		return d.AddDate(0, 0, 1), nil
	}
	return d, nil
}

// auditDay is the UTC midnight starting the day d names.
func auditDay(d time.Time) time.Time {
	y, m, day := d.Date()
	return time.Date(y, m, day, 0, 0, 0, 0, time.UTC)
}

// auditEntryOf maps an entry. changes is what the writer recorded about the change (secrets already
// redacted); metadata is how it was made: the kind of actor, the credential for API keys and OAuth apps, and
// the request id that correlates it with the access log.
func auditEntryOf(r dbq.AuditLogListRow) (api.AuditLog, error) {
	out := api.AuditLog{
		ID: r.ID, OrgID: r.OrganizationID, ActionDate: r.CreatedAt, Timestamp: api.NewOptDateTime(r.CreatedAt),
		Action: r.Action, EntityType: r.TargetType,
	}
	out.UserID.SetToNull()
	if r.UserID.Valid {
		out.UserID.SetTo(r.UserID.UUID)
	}
	out.Actor.SetToNull()
	if r.ActorUserID.Valid {
		out.Actor.SetTo(api.AuditActor{ID: api.NewOptUUID(r.ActorUserID.UUID), FirstName: auditOptString(r.ActorFirstName),
			LastName: auditOptString(r.ActorLastName), Email: auditOptString(r.ActorEmail)})
	}
	if id, err := uuid.Parse(r.TargetID); err == nil {
		out.EntityID = api.NewOptUUID(id)
	}
	if r.IpAddress != "" {
		out.IPAddress = api.NewOptString(r.IpAddress)
	}
	if r.UserAgent != "" {
		out.UserAgent = api.NewOptString(r.UserAgent)
	}
	changes := api.AuditLogChanges{}
	if len(r.Metadata) > 0 {
		if err := changes.UnmarshalJSON(r.Metadata); err != nil {
			return out, err
		}
	}
	out.Changes = api.NewOptAuditLogChanges(changes)
	meta := api.AuditLogMetadata{"actor_type": auditJSON(r.ActorType)}
	if r.ActorID.Valid && r.ActorType != "user" {
		meta["credential_id"] = auditJSON(r.ActorID.UUID.String())
	}
	if r.Event != "" {
		meta["event"] = auditJSON(r.Event)
	}
	if r.RequestID != "" {
		meta["request_id"] = auditJSON(r.RequestID)
	}
	out.Metadata = api.NewOptAuditLogMetadata(meta)
	return out, nil
}

// auditJSON encodes a string as a raw JSON value.
func auditJSON(s string) jx.Raw {
	b, _ := json.Marshal(s)
	return b
}

// auditOptString maps a nullable column onto an optional field.
func auditOptString(v *string) api.OptString {
	if v == nil {
		return api.OptString{}
	}
	return api.NewOptString(*v)
}
