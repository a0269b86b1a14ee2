// Package audit records who did what to which resource, in the same transaction as the change, so the log
// can never claim a change that rolled back or miss one that committed. Metadata is scrubbed of anything
// that looks like a secret before it is written.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// Entry describes one audited action in the audit log's vocabulary: a coarse Action and EntityType that
// GET /audit-logs filters on (action=create, entity_type=email_account), with the precise happening in Event.
type Entry struct {
	// Action is the verb, one of the Action constants.
	Action string
	// Event names the precise happening in the event catalog's words ("api_key.revoked",
	// "mailbox.warmup_paused"), kept in its own column so a filter on Action stays coarse; the API shows it
	// as metadata.event, and an action filter naming it exactly matches it.
	Event string
	// EntityType and EntityID name the resource acted on; EntityType is one of the Entity constants.
	EntityType string
	EntityID   string
	// Metadata holds details worth keeping (changed fields, counts); secrets in it are redacted.
	Metadata map[string]any
}

// The actions of part 3's audit vocabulary: what GET /audit-logs?action= filters on.
const (
	ActionCreate       = "create"
	ActionUpdate       = "update"
	ActionDelete       = "delete"
	ActionSend         = "send"
	ActionRevoke       = "revoke"
	ActionImport       = "import"
	ActionVerify       = "verify"
	ActionAccept       = "accept"
	ActionRotateSecret = "rotate_secret"
	ActionApprove      = "approve"
	ActionDeny         = "deny"
	ActionCancel       = "cancel"
)

// The entity types of part 3's audit vocabulary: what GET /audit-logs?entity_type= filters on.
const (
	EntityAPIKey           = "api_key"
	EntityCampaign         = "campaign"
	EntityContact          = "contact"
	EntityContactNote      = "contact_note"
	EntityEmail            = "email"
	EntityEmailAccount     = "email_account"
	EntityInvitation       = "invitation"
	EntityLabel            = "label"
	EntityMember           = "member"
	EntityOAuthApplication = "oauth_application"
	EntityOAuthGrant       = "oauth_grant"
	EntityOrganization     = "organization"
	EntityRole             = "role"
	EntitySegment          = "segment"
	EntitySuppression      = "suppression"
	EntityTeam             = "team"
	EntityWebhook          = "webhook"
	EntityAgentPolicy      = "agent_policy"
	EntityApproval         = "approval"
	EntityRun              = "run"
	EntityAppConnection    = "app_connection"
	EntityProductEvent     = "product_event"
)

// Redacted replaces the value of every metadata key that names a secret.
const Redacted = "[redacted]"

// secretWords mark metadata keys whose values are never stored.
var secretWords = []string{"secret", "password", "token", "api_key", "apikey", "authorization", "credential",
	"private_key", "key_hash", "cookie", "otp", "recovery_code"}

var queries = dbq.New()

// Record writes e to the audit log in tx, which must be organization-scoped (db.WithOrgTx). The actor is the
// authenticated principal of ctx (the system when there is none) and the request facts come from ctx.
func Record(ctx context.Context, tx pgx.Tx, e Entry) error {
	org, ok := db.OrgID(ctx)
	if !ok {
		return errors.New("audit: Record outside an organization-scoped transaction")
	}
	meta, err := json.Marshal(scrub(e.Metadata))
	if err != nil {
		return fmt.Errorf("audit: encode metadata: %w", err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	p := auth.PrincipalFrom(ctx)
	actorType, actorID := actor(p)
	var userID uuid.NullUUID
	if p != nil && p.UserID != uuid.Nil {
		userID = uuid.NullUUID{UUID: p.UserID, Valid: true}
	}
	info := reqctx.From(ctx)
	return queries.AuditInsert(ctx, tx, dbq.AuditInsertParams{
		OrganizationID: org,
		ID:             id,
		ActorType:      actorType,
		ActorID:        actorID,
		UserID:         userID,
		Action:         e.Action,
		Event:          e.Event,
		TargetType:     e.EntityType,
		TargetID:       e.EntityID,
		Metadata:       meta,
		IpAddress:      info.ClientIP,
		UserAgent:      info.UserAgent,
		RequestID:      info.ID,
	})
}

func actor(p *auth.Principal) (string, uuid.NullUUID) {
	if p == nil {
		return "system", uuid.NullUUID{}
	}
	switch p.Kind {
	case auth.KindAPIKey:
		return "api_key", uuid.NullUUID{UUID: p.CredentialID, Valid: true}
	case auth.KindOAuth:
		return "oauth_app", uuid.NullUUID{UUID: p.CredentialID, Valid: true}
	default:
		return "user", uuid.NullUUID{UUID: p.UserID, Valid: p.UserID != uuid.Nil}
	}
}

// scrub returns a copy of m with secret-named keys redacted, recursing into nested objects and lists.
func scrub(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if isSecretKey(k) {
			out[k] = Redacted
			continue
		}
		out[k] = scrubValue(v)
	}
	return out
}

func scrubValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return scrub(t)
	case []any:
		out := make([]any, len(t))
		for i, item := range t {
			out[i] = scrubValue(item)
		}
		return out
	default:
		return v
	}
}

func isSecretKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
