package handlers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// APIKeys implements API key management and usage reporting for the caller's organization: sessions need
// manage_api_keys, API keys and OAuth tokens need API_KEYS. A credential can never mint or widen a key beyond
// its own scopes and mailboxes, so API_KEYS is not a way to escalate.
type APIKeys struct {
	pool    *pgxpool.Pool
	limiter *auth.Limiter
	cursors *pagination.Cursors
	queries *dbq.Queries
	now     func() time.Time
}

// NewAPIKeys builds the API key handlers; list cursors are signed with a key derived from secret.
func NewAPIKeys(pool *pgxpool.Pool, secret []byte) *APIKeys {
	return &APIKeys{pool: pool, limiter: auth.NewLimiter(pool), cursors: pagination.NewCursors(secret), queries: dbq.New(), now: time.Now}
}

// Limits of key management.
const (
	sortAPIKeys        = "api_keys:created_at:desc"
	sortAPIKeyLogs     = "api_key_logs:created_at:desc"
	maxKeyMailboxes    = 1000
	maxKeyDescription  = 1000
	maxRevokeReason    = 500
	maxAnalyticsPoints = 1500
	// defaultRevokeReason is stored when a person revokes a key without saying why.
	defaultRevokeReason = "Revoked by user"
)

// keyWriteLimit bounds key-management writes per organization: minting keys is cheap to abuse and each one
// is a credential to audit.
var keyWriteLimit = auth.Limit{Max: 30, Window: time.Minute}

func (h *APIKeys) caller(ctx context.Context) (*auth.Principal, uuid.UUID, error) {
	org, err := teamCaller(ctx, auth.APIKeys, "API_KEYS", auth.ManageAPIKeys)
	if err != nil {
		return nil, uuid.Nil, err
	}
	return auth.PrincipalFrom(ctx), org, nil
}

// writer is caller for key-management writes, which are also rate limited per organization.
func (h *APIKeys) writer(ctx context.Context) (*auth.Principal, uuid.UUID, error) {
	p, org, err := h.caller(ctx)
	if err != nil {
		return nil, uuid.Nil, err
	}
	if err := h.limiter.Allow(ctx, "api_key_writes:org:"+org.String(), keyWriteLimit); err != nil {
		return nil, uuid.Nil, err
	}
	return p, org, nil
}

// keyPermissions checks a requested mask: defined bits only, and no bit the calling credential lacks.
func keyPermissions(p *auth.Principal, v int64) (auth.Permission, error) {
	perms := auth.Permission(uint64(v))
	if !perms.Valid() {
		return 0, apierror.BadRequest("unknown_permissions",
			fmt.Sprintf("permissions has bits outside the catalog (%#x); GET /api-keys/permissions lists them.", uint64(perms&^auth.FullAccess)))
	}
	if !p.IsSession() && !p.Permissions.Has(perms) {
		return 0, apierror.Forbidden("permission_escalation",
			"A credential cannot grant scopes it does not hold: "+strings.Join((perms&^p.Permissions).Names(), ", ")+".")
	}
	return perms, nil
}

// keyMailboxes checks a mailbox allow-list: bounded, deduplicated, and inside the calling key's own.
func keyMailboxes(p *auth.Principal, in []uuid.UUID) ([]uuid.UUID, error) {
	if len(in) > maxKeyMailboxes {
		return nil, apierror.BadRequest("invalid_allowed_email_accounts", fmt.Sprintf("allowed_email_accounts holds at most %d mailboxes.", maxKeyMailboxes))
	}
	out := make([]uuid.UUID, 0, len(in))
	seen := map[uuid.UUID]bool{}
	for _, id := range in {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if p.AllowedMailboxes != nil {
		if len(out) == 0 {
			return nil, apierror.Forbidden("permission_escalation", "A mailbox-scoped credential can only create keys scoped to its own mailboxes.")
		}
		for _, id := range out {
			if !p.MayUseMailbox(id) {
				return nil, apierror.Forbidden("permission_escalation", "A mailbox-scoped credential can only grant its own mailboxes.")
			}
		}
	}
	return out, nil
}

func keyAllowedIPs(in []string) ([]string, error) {
	out, err := auth.NormalizeAllowedIPs(in)
	if err != nil {
		return nil, apierror.BadRequest("invalid_allowed_ips", "allowed_ips: "+err.Error()+".")
	}
	return out, nil
}

func keyRateLimit(v int) (int32, error) {
	if v < 0 || v > auth.MaxRateLimitPerMinute {
		return 0, apierror.BadRequest("invalid_rate_limit", fmt.Sprintf("rate_limit_per_minute must be 0 (the default of %d) to %d.",
			auth.DefaultRateLimitPerMinute, auth.MaxRateLimitPerMinute))
	}
	return int32(v), nil
}

func keyName(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" || len([]rune(v)) > 255 {
		return "", apierror.BadRequest("invalid_name", "name must be 1 to 255 characters.")
	}
	return v, nil
}

func keyDescription(v string) (string, error) {
	if len([]rune(v)) > maxKeyDescription {
		return "", apierror.BadRequest("invalid_description", fmt.Sprintf("description must be at most %d characters.", maxKeyDescription))
	}
	return v, nil
}

// apiKeyOf maps a key row; expiry does not change the status (it is judged when the key is presented).
func apiKeyOf(k dbq.ApiKey) api.APIKey {
	out := api.APIKey{
		ID: k.ID, UserID: k.UserID.UUID, OrganizationID: k.OrganizationID, Name: k.Name,
		Description: api.NewOptString(k.Description), KeyPrefix: k.KeyPrefix, KeySuffix: k.KeySuffix,
		Permissions: k.Permissions, AllowedIps: k.AllowedIps, AllowedEmailAccounts: k.AllowedEmailAccounts,
		RateLimitPerMinute: int(k.RateLimitPerMinute), Status: api.APIKeyStatus(k.Status),
		LastUsedAt: optNilTime(k.LastUsedAt), LastRequestIP: optNilStringPtr(k.LastRequestIp),
		ExpiresAt: optNilTime(k.ExpiresAt), RevokedAt: optNilTime(k.RevokedAt), RevokedReason: optNilStringPtr(k.RevokedReason),
		CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt,
	}
	if out.AllowedIps == nil {
		out.AllowedIps = []string{}
	}
	if out.AllowedEmailAccounts == nil {
		out.AllowedEmailAccounts = []uuid.UUID{}
	}
	return out
}

func optNilTime(t *time.Time) api.OptNilDateTime {
	var out api.OptNilDateTime
	if t == nil {
		out.SetToNull()
	} else {
		out.SetTo(*t)
	}
	return out
}

func optNilStringPtr(s *string) api.OptNilString {
	var out api.OptNilString
	if s == nil {
		out.SetToNull()
	} else {
		out.SetTo(*s)
	}
	return out
}

// APIKeysListPermissions publishes the scope catalog and its presets.
func (h *APIKeys) APIKeysListPermissions(ctx context.Context) (*api.APIPermissionCatalog, error) {
	if _, _, err := h.caller(ctx); err != nil {
		return nil, err
	}
	out := &api.APIPermissionCatalog{
		Permissions: make([]api.APIPermission, len(auth.Catalog)),
		Presets:     api.APIPermissionCatalogPresets{ReadOnly: int64(auth.ReadOnly), FullAccess: int64(auth.FullAccess)},
	}
	for i, e := range auth.Catalog {
		out.Permissions[i] = api.APIPermission{Name: e.Name, Value: int64(e.Permission), Description: e.Description,
			Category: api.APIPermissionCategory(e.Category)}
	}
	return out, nil
}

// APIKeysCreate mints a key; its secret is in this answer only.
func (h *APIKeys) APIKeysCreate(ctx context.Context, req *api.CreateAPIKey, _ api.APIKeysCreateParams) (*api.APIKeyWithSecret, error) {
	p, org, err := h.writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	args := dbq.APIKeyCreateParams{OrganizationID: org, ID: id}
	if args.Name, err = keyName(req.Name); err != nil {
		return nil, err
	}
	if args.Description, err = keyDescription(req.Description.Value); err != nil {
		return nil, err
	}
	perms, err := keyPermissions(p, req.Permissions)
	if err != nil {
		return nil, err
	}
	args.Permissions = int64(perms)
	if args.AllowedIps, err = keyAllowedIPs(req.AllowedIps); err != nil {
		return nil, err
	}
	if args.AllowedEmailAccounts, err = keyMailboxes(p, req.AllowedEmailAccounts); err != nil {
		return nil, err
	}
	if args.RateLimitPerMinute, err = keyRateLimit(req.RateLimitPerMinute.Value); err != nil {
		return nil, err
	}
	if at, ok := req.ExpiresAt.Get(); ok {
		if !at.After(h.now()) {
			return nil, apierror.BadRequest("invalid_expires_at", "expires_at must be in the future.")
		}
		at = at.UTC()
		args.ExpiresAt = &at
	}
	if p.UserID != uuid.Nil {
		args.UserID = uuid.NullUUID{UUID: p.UserID, Valid: true}
	}
	minted := auth.MintAPIKey()
	args.KeyHash, args.KeyPrefix, args.KeySuffix = minted.Hash, minted.Prefix, minted.Suffix
	var row dbq.ApiKey
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if row, err = h.queries.APIKeyCreate(ctx, tx, args); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "api_key.created", EntityType: audit.EntityAPIKey, EntityID: row.ID.String(),
			Metadata: map[string]any{"name": row.Name, "permissions": row.Permissions, "key_prefix": row.KeyPrefix}})
	})
	if err != nil {
		return nil, err
	}
	k := apiKeyOf(row)
	return &api.APIKeyWithSecret{
		ID: k.ID, UserID: k.UserID, OrganizationID: k.OrganizationID, Name: k.Name, Description: k.Description,
		KeyPrefix: k.KeyPrefix, KeySuffix: k.KeySuffix, Permissions: k.Permissions, AllowedIps: k.AllowedIps,
		AllowedEmailAccounts: k.AllowedEmailAccounts, RateLimitPerMinute: k.RateLimitPerMinute, Status: k.Status,
		LastUsedAt: k.LastUsedAt, LastRequestIP: k.LastRequestIP, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
		RevokedReason: k.RevokedReason, CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt, Secret: minted.Secret,
	}, nil
}

// APIKeysList lists the organization's keys, newest first. An out-of-range limit falls back to 50.
func (h *APIKeys) APIKeysList(ctx context.Context, params api.APIKeysListParams) (*api.APIKeyList, error) {
	_, org, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	limit, _ := pagination.Limit(params.Limit.Value, params.Limit.Set, 50, 100, false)
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortAPIKeys, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]dbq.ApiKey, error) {
			args := dbq.APIKeyListParams{OrganizationID: org, RowLimit: rowLimit}
			args.BeforeCreatedAt, args.BeforeID = after.bounds()
			return h.queries.APIKeyList(ctx, tx, args)
		},
		func(k dbq.ApiKey) timeKey { return timeKey{At: k.CreatedAt, ID: k.ID} })
	if err != nil {
		return nil, err
	}
	out := &api.APIKeyList{Data: make([]api.APIKey, len(page.Data)), Pagination: orgPageInfo(page)}
	for i, k := range page.Data {
		out.Data[i] = apiKeyOf(k)
	}
	return out, nil
}

// APIKeysGet returns one key without its secret.
func (h *APIKeys) APIKeysGet(ctx context.Context, params api.APIKeysGetParams) (*api.APIKey, error) {
	_, org, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	var row dbq.ApiKey
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err = h.queries.APIKeyGet(ctx, tx, dbq.APIKeyGetParams{OrganizationID: org, ID: params.ID})
		return db.Classify(err, "API key")
	})
	if err != nil {
		return nil, err
	}
	out := apiKeyOf(row)
	return &out, nil
}

// APIKeysUpdate changes the given fields; rate_limit_per_minute 0 restores the default.
func (h *APIKeys) APIKeysUpdate(ctx context.Context, req *api.UpdateAPIKey, params api.APIKeysUpdateParams) (*api.APIKey, error) {
	p, org, err := h.writer(ctx)
	if err != nil {
		return nil, err
	}
	args := dbq.APIKeyUpdateParams{OrganizationID: org, ID: params.ID}
	var changed []string
	if v, ok := req.Name.Get(); ok {
		name, err := keyName(v)
		if err != nil {
			return nil, err
		}
		args.Name, changed = &name, append(changed, "name")
	}
	if v, ok := req.Description.Get(); ok {
		desc, err := keyDescription(v)
		if err != nil {
			return nil, err
		}
		args.Description, changed = &desc, append(changed, "description")
	}
	if v, ok := req.Permissions.Get(); ok {
		perms, err := keyPermissions(p, v)
		if err != nil {
			return nil, err
		}
		args.Permissions, changed = pgtype.Int8{Int64: int64(perms), Valid: true}, append(changed, "permissions")
	}
	if req.AllowedIps != nil {
		if args.AllowedIps, err = keyAllowedIPs(req.AllowedIps); err != nil {
			return nil, err
		}
		changed = append(changed, "allowed_ips")
	}
	if req.AllowedEmailAccounts != nil {
		if args.AllowedEmailAccounts, err = keyMailboxes(p, req.AllowedEmailAccounts); err != nil {
			return nil, err
		}
		changed = append(changed, "allowed_email_accounts")
	}
	if v, ok := req.RateLimitPerMinute.Get(); ok {
		rate, err := keyRateLimit(v)
		if err != nil {
			return nil, err
		}
		args.RateLimitPerMinute, changed = &rate, append(changed, "rate_limit_per_minute")
	}
	var row dbq.ApiKey
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if row, err = h.queries.APIKeyUpdate(ctx, tx, args); err != nil {
			return db.Classify(err, "API key")
		}
		if len(changed) == 0 {
			return nil
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "api_key.updated", EntityType: audit.EntityAPIKey, EntityID: row.ID.String(),
			Metadata: map[string]any{"fields": changed}})
	})
	if err != nil {
		return nil, err
	}
	out := apiKeyOf(row)
	return &out, nil
}

// APIKeysRevoke stops a key at once; revoking again answers the same and keeps the first reason.
func (h *APIKeys) APIKeysRevoke(ctx context.Context, params api.APIKeysRevokeParams) (*api.APIKeyRevokeResult, error) {
	_, org, err := h.writer(ctx)
	if err != nil {
		return nil, err
	}
	reason := strings.TrimSpace(params.Reason.Value)
	if reason == "" {
		reason = defaultRevokeReason
	}
	if len([]rune(reason)) > maxRevokeReason {
		return nil, apierror.BadRequest("invalid_reason", fmt.Sprintf("reason must be at most %d characters.", maxRevokeReason))
	}
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		before, err := h.queries.APIKeyGetForUpdate(ctx, tx, dbq.APIKeyGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "API key")
		}
		if _, err := h.queries.APIKeyRevoke(ctx, tx, dbq.APIKeyRevokeParams{OrganizationID: org, ID: params.ID, Reason: reason}); err != nil {
			return err
		}
		if before.Status == "revoked" {
			return nil
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionRevoke, Event: "api_key.revoked", EntityType: audit.EntityAPIKey, EntityID: params.ID.String(),
			Metadata: map[string]any{"reason": reason}})
	})
	if err != nil {
		return nil, err
	}
	return &api.APIKeyRevokeResult{Status: api.APIKeyRevokeResultStatusRevoked}, nil
}

// APIKeysDelete erases a key that can no longer authenticate, with its request log.
func (h *APIKeys) APIKeysDelete(ctx context.Context, params api.APIKeysDeleteParams) (*api.APIKeyDeleteResult, error) {
	_, org, err := h.writer(ctx)
	if err != nil {
		return nil, err
	}
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		k, err := h.queries.APIKeyGetForUpdate(ctx, tx, dbq.APIKeyGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "API key")
		}
		if k.Status == "active" && (k.ExpiresAt == nil || k.ExpiresAt.After(h.now())) {
			return apierror.Conflict("api_key_active", "This key can still authenticate. Revoke it first (DELETE /api-keys/{id}).")
		}
		if _, err := h.queries.APIKeyDelete(ctx, tx, dbq.APIKeyDeleteParams{OrganizationID: org, ID: params.ID}); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "api_key.deleted", EntityType: audit.EntityAPIKey, EntityID: params.ID.String(),
			Metadata: map[string]any{"name": k.Name}})
	})
	if err != nil {
		return nil, err
	}
	return &api.APIKeyDeleteResult{Status: api.APIKeyDeleteResultStatusDeleted}, nil
}

// APIKeysUsageSummary counts keys by state and the organization's requests of the last 24 hours.
func (h *APIKeys) APIKeysUsageSummary(ctx context.Context) (*api.APIKeyUsageSummary, error) {
	_, org, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	out := &api.APIKeyUsageSummary{}
	out.LastCallAt.SetToNull()
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		counts, err := h.queries.APIKeyCounts(ctx, tx, org)
		if err != nil {
			return err
		}
		totals, err := h.queries.APIKeyUsageTotals(ctx, tx, dbq.APIKeyUsageTotalsParams{OrganizationID: org, Since: h.now().Add(-24 * time.Hour)})
		if err != nil {
			return err
		}
		last, err := h.queries.APIKeyLastCall(ctx, tx, org)
		if err != nil {
			return err
		}
		out.ActiveKeys, out.RevokedKeys, out.ExpiredKeys = int(counts.ActiveKeys), int(counts.RevokedKeys), int(counts.ExpiredKeys)
		out.Requests24h, out.Errors24h, out.AvgLatencyMs24h = totals.Requests, totals.Errors, totals.AvgLatencyMs
		if len(last) == 1 && last[0] != nil {
			out.LastCallAt.SetTo(*last[0])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// analyticsWindow resolves from, to and interval: to defaults to now, from to 24 hours before to, interval
// to hour; the range must be positive and fit maxAnalyticsPoints buckets.
func (h *APIKeys) analyticsWindow(from, to api.OptDateTime, interval string) (time.Time, time.Time, string, error) {
	end := h.now().UTC()
	if v, ok := to.Get(); ok {
		end = v.UTC()
	}
	start := end.Add(-24 * time.Hour)
	if v, ok := from.Get(); ok {
		start = v.UTC()
	}
	if interval == "" {
		interval = "hour"
	}
	step := map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}[interval]
	if step == 0 {
		return time.Time{}, time.Time{}, "", apierror.BadRequest("invalid_interval", "interval must be minute, hour or day.")
	}
	if !start.Before(end) {
		return time.Time{}, time.Time{}, "", apierror.BadRequest("invalid_range", "from must be before to.")
	}
	if end.Sub(start)/step > maxAnalyticsPoints {
		return time.Time{}, time.Time{}, "", apierror.BadRequest("invalid_range",
			fmt.Sprintf("The range holds more than %d %s buckets; use a shorter range or a larger interval.", maxAnalyticsPoints, interval))
	}
	return start, end, interval, nil
}

// analytics reads buckets and the per-endpoint breakdown of one key (key valid) or of every key.
func (h *APIKeys) analytics(ctx context.Context, key uuid.NullUUID, from, to api.OptDateTime, interval string) (*api.APIKeyAnalytics, error) {
	_, org, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	start, end, unit, err := h.analyticsWindow(from, to, interval)
	if err != nil {
		return nil, err
	}
	out := &api.APIKeyAnalytics{APIKeyID: key.UUID, From: start, To: end, Interval: api.APIKeyAnalyticsInterval(unit),
		Buckets: []api.APIKeyUsageBucket{}, Endpoints: []api.APIKeyEndpointStat{}}
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if key.Valid {
			if _, err := h.queries.APIKeyGet(ctx, tx, dbq.APIKeyGetParams{OrganizationID: org, ID: key.UUID}); err != nil {
				return db.Classify(err, "API key")
			}
		}
		buckets, err := h.queries.APIKeyUsageBuckets(ctx, tx, dbq.APIKeyUsageBucketsParams{
			OrganizationID: org, ApiKeyID: key, Unit: unit, FromAt: start, ToAt: end})
		if err != nil {
			return err
		}
		for _, b := range buckets {
			out.Buckets = append(out.Buckets, api.APIKeyUsageBucket{Bucket: b.Bucket.UTC(), Total: b.Total, Success: b.Success,
				ClientErrors: b.ClientErrors, ServerErrors: b.ServerErrors, AvgLatencyMs: b.AvgLatencyMs})
			out.Total += b.Total
			out.Errors += b.ClientErrors + b.ServerErrors
		}
		endpoints, err := h.queries.APIKeyUsageEndpoints(ctx, tx, dbq.APIKeyUsageEndpointsParams{
			OrganizationID: org, ApiKeyID: key, FromAt: start, ToAt: end})
		if err != nil {
			return err
		}
		for _, e := range endpoints {
			out.Endpoints = append(out.Endpoints, api.APIKeyEndpointStat{Endpoint: e.Endpoint, Method: e.Method, Count: e.Count,
				ErrorCount: e.ErrorCount, AvgLatencyMs: e.AvgLatencyMs})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// APIKeysUsageAnalytics is the organization-wide analytics (api_key_id is the all-zero UUID).
func (h *APIKeys) APIKeysUsageAnalytics(ctx context.Context, params api.APIKeysUsageAnalyticsParams) (*api.APIKeyAnalytics, error) {
	return h.analytics(ctx, uuid.NullUUID{}, params.From, params.To, string(params.Interval.Value))
}

// APIKeysAnalytics is one key's analytics; the id `all` is the organization-wide form.
func (h *APIKeys) APIKeysAnalytics(ctx context.Context, params api.APIKeysAnalyticsParams) (*api.APIKeyAnalytics, error) {
	key := uuid.NullUUID{}
	if params.ID != "all" {
		id, err := uuid.Parse(params.ID)
		if err != nil {
			return nil, apierror.BadRequest("invalid_id", "id must be an API key id or `all`.")
		}
		key = uuid.NullUUID{UUID: id, Valid: true}
	}
	return h.analytics(ctx, key, params.From, params.To, string(params.Interval.Value))
}

// APIKeysListLogs lists one key's requests, newest first.
func (h *APIKeys) APIKeysListLogs(ctx context.Context, params api.APIKeysListLogsParams) (*api.APIKeyUsageLogList, error) {
	_, org, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, 50, 200, true)
	if err != nil {
		return nil, err
	}
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortAPIKeyLogs, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]dbq.ApiKeyUsageLog, error) {
			if _, err := h.queries.APIKeyGet(ctx, tx, dbq.APIKeyGetParams{OrganizationID: org, ID: params.ID}); err != nil {
				return nil, db.Classify(err, "API key")
			}
			args := dbq.APIKeyUsageLogListParams{OrganizationID: org, ApiKeyID: params.ID, RowLimit: rowLimit}
			args.BeforeCreatedAt, args.BeforeID = after.bounds()
			return h.queries.APIKeyUsageLogList(ctx, tx, args)
		},
		func(l dbq.ApiKeyUsageLog) timeKey { return timeKey{At: l.CreatedAt, ID: l.ID} })
	if err != nil {
		return nil, err
	}
	out := &api.APIKeyUsageLogList{Data: make([]api.APIKeyUsageLog, len(page.Data)), Pagination: orgPageInfo(page)}
	for i, l := range page.Data {
		out.Data[i] = api.APIKeyUsageLog{ID: l.ID, APIKeyID: l.ApiKeyID, Endpoint: l.Endpoint, Method: l.Method,
			IPAddress: l.IpAddress, UserAgent: l.UserAgent, ResponseCode: int(l.ResponseCode),
			ResponseTimeMs: int(l.ResponseTimeMs), CreatedAt: l.CreatedAt}
	}
	return out, nil
}
