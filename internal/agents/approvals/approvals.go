package approvals

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/policy"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

var queries = dbq.New()

// ExpiresAfter is how long an approval waits for a person (part 1's limits: 30 minutes).
const ExpiresAfter = 30 * time.Minute

// The statuses of an approval (the approvals CHECK lists the same).
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusDenied   = "denied"
	StatusExpired  = "expired"
	StatusExecuted = "executed"
)

// Request is an action the gate did not allow, as the entry point hands it over.
type Request struct {
	// ActionType is the capability the action needed; its Executor acts on approval.
	ActionType policy.Capability
	// Operation names the kind of request when one action type holds several (campaign.launch holds run
	// launches and lead adds): it is stored as the payload's "operation" and picks the Executor registered for
	// it with RegisterOperation ("" for the one registered with Register).
	Operation string
	// RunID is the run the action belongs to (uuid.Nil: none).
	RunID uuid.UUID
	// Payload is everything the Executor needs to act later and the person needs to decide: the request, the
	// requester's scope (its mailbox limits) and, for a run, the plan. It must encode as a JSON object.
	Payload map[string]any
	// Decision is the gate's refusal: its reasons and the credential's policy.
	Decision policy.Decision
	// Summary is a short line for the people who may decide ("Hello Carol to carol@client.example"); the
	// notification reads "An agent asks to <action>: <summary>".
	Summary string
}

// Executor acts on an approved approval a, in the decision's transaction tx, as approver allowed it, and says
// what it did (such as {"task_id": ...}). It re-runs every hard gate with the requester's scope held in the
// payload; an *apierror.Error below 500 is a hard gate's refusal, recorded as the approval's result (the
// executor's writes are rolled back), and any other error fails the decision.
type Executor func(ctx context.Context, tx pgx.Tx, a dbq.Approval, approver *auth.Principal, now time.Time) (result map[string]any, err error)

// Service creates, decides and expires approvals.
type Service struct {
	pool     *pgxpool.Pool
	outbox   *events.Outbox
	notifier *notify.Notifier
	appURL   string

	mu        sync.RWMutex
	executors map[executorKey]Executor
	hooks     map[policy.Capability]Hook
}

// executorKey names an Executor: an action type and one of its operations ("" for the type's own).
type executorKey struct {
	actionType policy.Capability
	operation  string
}

// Hook learns, in the deciding transaction, that an approval of its action type was decided: approved
// (executed, or approved with a hard gate's refusal as result), denied or expired. A run moves to its next
// state through it. An error fails the decision.
type Hook func(ctx context.Context, tx pgx.Tx, a dbq.Approval, now time.Time) error

// New builds the service: decisions run in transactions of pool, events and their jobs go through outbox, and
// approval links point into the web app at appURL.
func New(pool *pgxpool.Pool, outbox *events.Outbox, appURL string) *Service {
	return &Service{pool: pool, outbox: outbox, notifier: notify.NewNotifier(outbox.Jobs()), appURL: appURL,
		executors: map[executorKey]Executor{}, hooks: map[policy.Capability]Hook{}}
}

// Register makes e the way approved approvals of actionType act. The composition root registers one executor
// per gated action type (sends and replies by the send handlers, launches by runs); registering a type twice
// replaces the first.
func (s *Service) Register(actionType policy.Capability, e Executor) {
	s.RegisterOperation(actionType, "", e)
}

// RegisterOperation makes e the way approved approvals of actionType whose request was operation (Request's
// Operation) act; registering a pair twice replaces the first.
func (s *Service) RegisterOperation(actionType policy.Capability, operation string, e Executor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.executors[executorKey{actionType, operation}] = e
}

// OnDecided makes h hear of every decision on approvals of actionType (after the executor, if it ran);
// registering a type twice replaces the first.
func (s *Service) OnDecided(actionType policy.Capability, h Hook) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks[actionType] = h
}

// hook is the decision hook of actionType (nil: none).
func (s *Service) hook(actionType string) Hook {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.hooks[policy.Capability(actionType)]
}

// executor is how a acts when approved: the Executor of its action type and operation.
func (s *Service) executor(a dbq.Approval) (Executor, bool) {
	var op struct {
		Operation string `json:"operation"`
	}
	if err := json.Unmarshal(a.Payload, &op); err != nil {
		return nil, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.executors[executorKey{policy.Capability(a.ActionType), op.Operation}]
	return e, ok
}

// URL is where a person decides approval id in the web app: strings.TrimRight(appURL, "/") + "/approvals/<id>".
func URL(appURL string, id uuid.UUID) string {
	return strings.TrimRight(appURL, "/") + "/approvals/" + id.String()
}

// URL is the link of approval id in this deployment's web app.
func (s *Service) URL(id uuid.UUID) string { return URL(s.appURL, id) }

// Create holds r for a person in tx (organization-scoped, p's organization): the approval (expiring
// ExpiresAfter after now), its approval.requested event, a team_activity notification to every member who
// may decide, and the job that expires it.
func (s *Service) Create(ctx context.Context, tx pgx.Tx, p *auth.Principal, r Request, now time.Time) (dbq.Approval, error) {
	if p == nil || r.Decision.Allowed {
		return dbq.Approval{}, fmt.Errorf("approvals: only an action the gate refused for a credential is held")
	}
	if !r.ActionType.Valid() {
		return dbq.Approval{}, fmt.Errorf("approvals: unknown action type %q", r.ActionType)
	}
	if r.Operation != "" {
		payload := maps.Clone(r.Payload)
		if payload == nil {
			payload = map[string]any{}
		}
		payload["operation"] = r.Operation
		r.Payload = payload
	}
	payload, err := json.Marshal(r.Payload)
	if err != nil || len(payload) == 0 || payload[0] != '{' {
		return dbq.Approval{}, fmt.Errorf("approvals: payload must encode as a JSON object (%v)", err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return dbq.Approval{}, err
	}
	reasons := r.Decision.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	now = now.UTC().Truncate(time.Microsecond)
	a, err := queries.ApprovalInsert(ctx, tx, dbq.ApprovalInsertParams{OrganizationID: p.OrganizationID, ID: id,
		RunID: nullID(r.RunID), ActionType: string(r.ActionType), Payload: payload, Reasons: reasons,
		PolicyID: nullID(r.Decision.PolicyID), CredentialKind: string(p.Kind), CredentialID: p.CredentialID,
		RequestedByUserID: nullID(p.UserID), ExpiresAt: now.Add(ExpiresAfter), CreatedAt: now})
	if err != nil {
		return dbq.Approval{}, fmt.Errorf("approvals: create: %w", err)
	}
	link := s.URL(a.ID)
	if _, err := s.outbox.Emit(ctx, tx, events.ApprovalRequested, map[string]any{"approval_id": a.ID, "action_type": a.ActionType,
		"run_id": runID(a), "reasons": a.Reasons, "expires_at": a.ExpiresAt, "approval_url": link}); err != nil {
		return dbq.Approval{}, err
	}
	if _, err := s.outbox.Jobs().InsertTx(ctx, tx, ExpireArgs{OrganizationID: a.OrganizationID, ApprovalID: a.ID},
		&river.InsertOpts{ScheduledAt: a.ExpiresAt}); err != nil {
		return dbq.Approval{}, fmt.Errorf("approvals: schedule expiry: %w", err)
	}
	deciders, err := queries.ApprovalDeciders(ctx, tx, dbq.ApprovalDecidersParams{OrganizationID: a.OrganizationID,
		Roles: decidingRoles(), Permission: int64(auth.ManageCampaigns)})
	if err != nil {
		return dbq.Approval{}, fmt.Errorf("approvals: deciders: %w", err)
	}
	title := "An agent asks to " + verb(r.ActionType)
	if r.Summary != "" {
		title += ": " + r.Summary
	}
	for _, u := range deciders {
		if err := s.notifier.NotifyTx(ctx, tx, notify.Event{UserID: u, OrganizationID: a.OrganizationID, Category: notify.TeamActivity,
			Title: truncate.Chars(title, 200), Body: truncate.Chars(strings.Join(a.Reasons, " "), 1000), Link: link}); err != nil {
			return dbq.Approval{}, err
		}
	}
	return a, nil
}

// List is org's newest approvals, at most limit, newest first.
func List(ctx context.Context, tx pgx.Tx, org uuid.UUID, limit int) ([]dbq.Approval, error) {
	return queries.ApprovalList(ctx, tx, dbq.ApprovalListParams{OrganizationID: org, RowLimit: int32(limit)})
}

// StatusAt is a's status as of now: a pending approval whose time ran out reads expired even before the
// expiry job has marked it.
func StatusAt(a dbq.Approval, now time.Time) string {
	if a.Status == StatusPending && !a.ExpiresAt.After(now) {
		return StatusExpired
	}
	return a.Status
}

// verb says what an action type does, for "An agent asks to ...".
func verb(c policy.Capability) string {
	switch c {
	case policy.EmailCompose:
		return "send an email"
	case policy.InboxReply:
		return "send a reply"
	case policy.CampaignLaunch:
		return "launch a campaign"
	}
	return "provision mailboxes"
}

// decidingRoles are the built-in roles that hold manage_campaigns, the permission deciding needs.
func decidingRoles() []string {
	var out []string
	for _, r := range []string{auth.RoleOwner, auth.RoleAdmin, auth.RoleMember} {
		if auth.BuiltinRolePermissions[r].Has(auth.ManageCampaigns) {
			out = append(out, r)
		}
	}
	return out
}

func nullID(id uuid.UUID) uuid.NullUUID { return uuid.NullUUID{UUID: id, Valid: id != uuid.Nil} }

// runID is a's run for event data: null when it holds no run.
func runID(a dbq.Approval) any {
	if a.RunID.Valid {
		return a.RunID.UUID
	}
	return nil
}

// policyOf is a's action type as a capability.
func policyOf(a dbq.Approval) policy.Capability { return policy.Capability(a.ActionType) }
