package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

var queries = dbq.New()

// MaxListed is how many runs GET /runs answers, newest first: the contract's list has no pages, and an
// agent looks at its recent runs.
const MaxListed = 200

// Runner creates runs and carries them through their states: the API creates and cancels, the jobs
// (AdvanceWorker, SyncWorker) and the approval executor move them on.
type Runner struct {
	pool      *pgxpool.Pool
	store     *campaign.Store
	outbox    *events.Outbox
	jobs      events.Inserter
	approvals *approvals.Service
	// authGrace is how long a mailbox domain may fail authentication before its mailboxes stop cold sending
	// (OUTFLOW_DOMAIN_AUTH_GRACE): such mailboxes are not frozen as senders and add no capacity to a plan.
	authGrace time.Duration
	appURL    string
	now       func() time.Time
}

// Deps is what a Runner is built from.
type Deps struct {
	Pool *pgxpool.Pool
	// Store is the campaign store a launch creates, changes and starts campaigns through.
	Store *campaign.Store
	// Outbox raises the runs' events; its job inserter inserts the runs' jobs in the same transactions.
	Outbox *events.Outbox
	// Approvals holds refused launches for a person; the Runner registers its executor with it.
	Approvals *approvals.Service
	AuthGrace time.Duration
	// AppURL is the web app's root, where approval links point.
	AppURL string
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// NewRunner builds the runner and registers with the approvals service the campaign.launch executor (an
// approved run launches in the approver's transaction) and the decision hook (a denied, expired or refused
// approval ends the run in the deciding transaction).
func NewRunner(d Deps) *Runner {
	r := &Runner{pool: d.Pool, store: d.Store, outbox: d.Outbox, jobs: d.Outbox.Jobs(), approvals: d.Approvals, authGrace: d.AuthGrace,
		appURL: d.AppURL, now: d.Now}
	if r.now == nil {
		r.now = time.Now
	}
	if r.approvals != nil {
		r.approvals.Register(launchCapability, r.executeApproved)
		r.approvals.OnDecided(launchCapability, r.decided)
	}
	return r
}

// Run is a stored run with its input decoded.
type Run struct {
	dbq.Run
	Input Input
	// ApprovalURL is where a person decides the run's approval ("" when it has none).
	ApprovalURL string
}

// Detail is a run with its event stream, oldest first.
type Detail struct {
	Run
	Events []dbq.RunEvent
}

func (r *Runner) view(row dbq.Run) (Run, error) {
	out := Run{Run: row}
	if err := json.Unmarshal(row.Input, &out.Input); err != nil {
		return Run{}, fmt.Errorf("runs: decode input of %s: %w", row.ID, err)
	}
	if row.ApprovalID.Valid {
		out.ApprovalURL = approvals.URL(r.appURL, row.ApprovalID.UUID)
	}
	return out, nil
}

// Create stores a new run in state queued, validated (Validate, then the records it names) for the
// principal p, with its first event and its advance job, in tx. A second call with the same credential and
// idempotency key answers the first run and stores nothing.
func (r *Runner) Create(ctx context.Context, tx pgx.Tx, p *auth.Principal, key string, in Input) (Run, error) {
	org := p.OrganizationID
	if err := Validate(in, r.now()); err != nil {
		return Run{}, err
	}
	if err := checkRefs(ctx, tx, p, in); err != nil {
		return Run{}, err
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return Run{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Run{}, err
	}
	var user uuid.NullUUID
	if p.UserID != uuid.Nil {
		user = uuid.NullUUID{UUID: p.UserID, Valid: true}
	}
	row, err := queries.RunInsert(ctx, tx, dbq.RunInsertParams{OrganizationID: org, ID: id, Intent: in.Intent, Input: raw,
		CredentialKind: string(p.Kind), CredentialID: p.CredentialID, UserID: user, IdempotencyKey: key, Now: r.now()})
	if errors.Is(err, pgx.ErrNoRows) {
		row, err = queries.RunByKey(ctx, tx, dbq.RunByKeyParams{OrganizationID: org, CredentialID: p.CredentialID, IdempotencyKey: key})
		if err != nil {
			return Run{}, err
		}
		return r.view(row)
	}
	if err != nil {
		return Run{}, err
	}
	if err := r.record(ctx, tx, row, "", change{to: StateQueued, event: EventCreated,
		message: fmt.Sprintf("The run was accepted with intent %s.", in.Intent), data: map[string]any{"intent": in.Intent}}); err != nil {
		return Run{}, err
	}
	if _, err := r.jobs.InsertTx(ctx, tx, AdvanceArgs{OrganizationID: org, RunID: row.ID}, nil); err != nil {
		return Run{}, fmt.Errorf("runs: enqueue advance: %w", err)
	}
	if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "run.created", EntityType: audit.EntityRun,
		EntityID: row.ID.String(), Metadata: map[string]any{"intent": in.Intent, "campaign_id": nullID(in.CampaignID)}}); err != nil {
		return Run{}, err
	}
	return r.view(row)
}

// checkRefs checks the records a run names against the principal's organization: the campaign, the explicit
// mailboxes (a mailbox-scoped key may name only its own), the tags, contacts, segments and app connections.
// A foreign id is as unknown as a made-up one.
func checkRefs(ctx context.Context, tx pgx.Tx, p *auth.Principal, in Input) error {
	org := p.OrganizationID
	if in.CampaignID.Valid {
		if _, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: org, ID: in.CampaignID.UUID}); errors.Is(err, pgx.ErrNoRows) {
			return bad("campaign_id", fmt.Sprintf("names no campaign of this organization (%s).", in.CampaignID.UUID))
		} else if err != nil {
			return err
		}
	}
	if len(in.Senders.MailboxIDs) > 0 {
		found, err := queries.MailboxesExisting(ctx, tx, dbq.MailboxesExistingParams{OrganizationID: org, MailboxIds: in.Senders.MailboxIDs})
		if err != nil {
			return err
		}
		for i, id := range in.Senders.MailboxIDs {
			if !slices.Contains(found, id) || !p.MayUseMailbox(id) {
				return bad(fmt.Sprintf("senders.mailbox_ids[%d]", i), fmt.Sprintf("names no mailbox of this organization (%s).", id))
			}
		}
	}
	known := []struct {
		field string
		ids   []uuid.UUID
		find  func([]uuid.UUID) ([]uuid.UUID, error)
		what  string
	}{
		{"senders.tag_ids", in.Senders.TagIDs, func(ids []uuid.UUID) ([]uuid.UUID, error) {
			return queries.CampaignEstimateTagsKnown(ctx, tx, dbq.CampaignEstimateTagsKnownParams{OrganizationID: org, Ids: ids})
		}, "mailbox tag"},
		{"contact_ids", in.ContactIDs, func(ids []uuid.UUID) ([]uuid.UUID, error) {
			return queries.ContactIDsExisting(ctx, tx, dbq.ContactIDsExistingParams{OrganizationID: org, Ids: ids})
		}, "contact"},
		{"segment_ids", in.SegmentIDs, func(ids []uuid.UUID) ([]uuid.UUID, error) {
			return queries.CampaignEstimateSegmentsKnown(ctx, tx, dbq.CampaignEstimateSegmentsKnownParams{OrganizationID: org, Ids: ids})
		}, "segment"},
	}
	for _, k := range known {
		if len(k.ids) == 0 {
			continue
		}
		found, err := k.find(k.ids)
		if err != nil {
			return err
		}
		for i, id := range k.ids {
			if !slices.Contains(found, id) {
				return bad(fmt.Sprintf("%s[%d]", k.field, i), fmt.Sprintf("names no %s of this organization (%s).", k.what, id))
			}
		}
	}
	_, _, err := campaignSteps(in.Steps, connectionResolver(ctx, tx, org))
	return err
}

// connectionResolver finds an app_action step's connection by id or by name in org.
func connectionResolver(ctx context.Context, tx pgx.Tx, org uuid.UUID) func(string) (uuid.UUID, error) {
	return func(connection string) (uuid.UUID, error) {
		var id uuid.NullUUID
		if v, err := uuid.Parse(connection); err == nil {
			id = uuid.NullUUID{UUID: v, Valid: true}
		}
		found, err := queries.RunAppConnection(ctx, tx, dbq.RunAppConnectionParams{OrganizationID: org, ID: id, Name: connection})
		if errors.Is(err, pgx.ErrNoRows) {
			return uuid.Nil, apierror.BadRequest("app_connection_not_found",
				fmt.Sprintf("steps: app_action.connection %q names no app connection of this organization (by id or name).", connection)).
				WithFix("GET /app-connections lists the organization's app connections.")
		}
		return found, err
	}
}

// Get reads one run with its event stream.
func (r *Runner) Get(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (Detail, error) {
	row, err := queries.RunGet(ctx, tx, dbq.RunGetParams{OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Detail{}, NotFound()
	}
	if err != nil {
		return Detail{}, err
	}
	run, err := r.view(row)
	if err != nil {
		return Detail{}, err
	}
	evs, err := queries.RunEventsOf(ctx, tx, dbq.RunEventsOfParams{OrganizationID: org, RunID: id})
	return Detail{Run: run, Events: evs}, err
}

// List reads the organization's newest runs (at most MaxListed), newest first.
func (r *Runner) List(ctx context.Context, tx pgx.Tx, org uuid.UUID) ([]Run, error) {
	rows, err := queries.RunList(ctx, tx, dbq.RunListParams{OrganizationID: org, RowLimit: MaxListed})
	if err != nil {
		return nil, err
	}
	out := make([]Run, len(rows))
	for i, row := range rows {
		if out[i], err = r.view(row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lock reads a run for a transition (404 when unknown).
func lock(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (dbq.Run, error) {
	row, err := queries.RunLock(ctx, tx, dbq.RunLockParams{OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return row, NotFound()
	}
	return row, err
}

// Cancel moves a run that has not ended to cancelled: a started campaign is stopped (its queued sends are
// cancelled with it), a pending approval is denied with the reason "The run was cancelled.". A run in a final
// state is 409 run_final.
func (r *Runner) Cancel(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (Run, error) {
	run, err := lock(ctx, tx, org, id)
	if err != nil {
		return Run{}, err
	}
	if Final(run.State) {
		return Run{}, errFinal(run.State)
	}
	data := map[string]any{"previous_state": run.State}
	if run.CampaignID.Valid {
		stopped, err := r.stopCampaign(ctx, tx, org, run.CampaignID.UUID)
		if err != nil {
			return Run{}, err
		}
		data["campaign_stopped"] = stopped
	}
	if run.State == StateAwaitingApproval && run.ApprovalID.Valid {
		withdrawn, err := r.approvals.Withdraw(ctx, tx, org, run.ApprovalID.UUID, cancelReason, r.now())
		if err != nil {
			return Run{}, err
		}
		data["approval_withdrawn"] = withdrawn
	}
	if err := r.move(ctx, tx, &run, change{to: StateCancelled, event: EventCancelled, message: "The run was cancelled.", data: data}); err != nil {
		return Run{}, err
	}
	if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCancel, Event: "run.cancelled", EntityType: audit.EntityRun,
		EntityID: run.ID.String(), Metadata: data}); err != nil {
		return Run{}, err
	}
	return r.view(run)
}

// stopCampaign pauses the run's campaign when it is active (its queued sends are cancelled); a campaign that
// is not sending, or was deleted, is left alone. It reports whether it stopped one.
func (r *Runner) stopCampaign(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (bool, error) {
	status, err := queries.RunCampaignStatus(ctx, tx, dbq.RunCampaignStatusParams{OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) || err == nil && status != campaign.StatusActive {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = r.store.Stop(ctx, tx, org, id)
	return err == nil, err
}
