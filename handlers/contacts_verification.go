package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// ContactVerification implements the verification overview and verification runs over a selection. The
// built-in verifier (package verify) checks every run; no external provider can be connected yet, so the
// overview always names it.
//
// Runs may overlap: a contact still waiting in a queued or running run is left out of a new one (the
// earlier run checks it), so concurrent runs never race on one contact and no run is refused for overlapping.
// Verdicts that were imported or came from an external provider are never replaced; the run counts such a
// contact as processed under the verdict it keeps.
type ContactVerification struct {
	pool     *pgxpool.Pool
	jobs     events.Inserter
	verifier *verify.Verifier
	queries  *dbq.Queries
}

// NewContactVerification builds the verification operations; jobs enqueues the runs and verifier is the
// built-in verifier, asked whether it is ready.
func NewContactVerification(pool *pgxpool.Pool, jobs events.Inserter, verifier *verify.Verifier) *ContactVerification {
	return &ContactVerification{pool: pool, jobs: jobs, verifier: verifier, queries: dbq.New()}
}

// maxVerificationRunsShown is how many runs the overview lists.
const maxVerificationRunsShown = 20

// ContactsVerificationStatus returns the verifier in use, whether the built-in one can run here (its DNS
// answers; see verify.Verifier.Ready), the organization's contacts by verdict and the recent runs.
func (h *ContactVerification) ContactsVerificationStatus(ctx context.Context) (*api.ContactVerificationOverview, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	out := &api.ContactVerificationOverview{Provider: verify.Provider, BuiltinReady: h.verifier.Ready(ctx),
		Runs: []api.ContactVerificationRun{}}
	out.ConnectionID.SetToNull()
	out.Credits.SetToNull()
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		counts, err := h.queries.VerificationCounts(ctx, tx, org)
		switch {
		case errors.Is(err, pgx.ErrNoRows): // no contact was ever written: all zeros
		case err != nil:
			return err
		default:
			out.Counts = api.ContactVerificationCounts{Valid: int(counts.Valid), Risky: int(counts.Risky),
				Invalid: int(counts.Invalid), Unknown: int(counts.Unknown), Pending: int(counts.Pending)}
		}
		runs, err := h.queries.VerificationRunRecent(ctx, tx, dbq.VerificationRunRecentParams{
			OrganizationID: org, RowLimit: maxVerificationRunsShown})
		if err != nil {
			return err
		}
		for _, r := range runs {
			out.Runs = append(out.Runs, verificationRunOf(r))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ContactsVerificationStart queues a run over the selected contacts: the run, its contacts and its job are
// written in one transaction. Contacts waiting in another active run are left out (see ContactVerification).
func (h *ContactVerification) ContactsVerificationStart(ctx context.Context, req *api.ContactSelection, _ api.ContactsVerificationStartParams) (*api.ContactVerificationRun, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	sel, err := contacts.ParseSelection(selectionInput(*req))
	if err != nil {
		return nil, err
	}
	if !h.verifier.Ready(ctx) {
		return nil, apierror.Unavailable("verifier_unavailable",
			"The built-in verifier cannot reach DNS on this deployment and no verification provider is connected.")
	}
	runID, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var run dbq.VerificationRun
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		ids, err := sel.IDs(ctx, tx, org)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return apierror.BadRequest("empty_selection", "None of the selected contacts exist.")
		}
		if _, err := h.queries.VerificationRunCreate(ctx, tx, dbq.VerificationRunCreateParams{
			OrganizationID: org, ID: runID, Provider: verify.Provider}); err != nil {
			return err
		}
		n, err := h.queries.VerificationRunContactsAdd(ctx, tx, dbq.VerificationRunContactsAddParams{
			OrganizationID: org, RunID: runID, ContactIds: ids})
		if err != nil {
			return err
		}
		if run, err = h.queries.VerificationRunSetTotal(ctx, tx, dbq.VerificationRunSetTotalParams{
			OrganizationID: org, ID: runID, Total: int32(n)}); err != nil {
			return err
		}
		if _, err := h.jobs.InsertTx(ctx, tx, verify.RunArgs{OrganizationID: org, RunID: runID}, nil); err != nil {
			return fmt.Errorf("enqueue verification run: %w", err)
		}
		if _, err := events.NewOutbox(h.jobs).Emit(ctx, tx, events.BulkOperationStarted, verify.RunStarted(run)); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionVerify, Event: "contact_verification.started", EntityType: audit.EntityContact,
			EntityID: runID.String(), Metadata: map[string]any{"selected": len(ids), "queued": n, "provider": verify.Provider}})
	})
	if err != nil {
		return nil, err
	}
	out := verificationRunOf(run)
	return &out, nil
}

// ContactsVerificationGet returns one run of the organization; an unknown id is 404.
func (h *ContactVerification) ContactsVerificationGet(ctx context.Context, params api.ContactsVerificationGetParams) (*api.ContactVerificationRun, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var run dbq.VerificationRun
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		run, err = h.queries.VerificationRunGet(ctx, tx, dbq.VerificationRunGetParams{OrganizationID: org, ID: params.ID})
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apierror.NotFound("verification_run_not_found", "Verification run not found.")
	}
	if err != nil {
		return nil, err
	}
	out := verificationRunOf(run)
	return &out, nil
}

// verificationRunOf maps a run; pending is the selected contacts not checked yet.
func verificationRunOf(r dbq.VerificationRun) api.ContactVerificationRun {
	out := api.ContactVerificationRun{
		ID: r.ID, OrganizationID: api.NewOptUUID(r.OrganizationID), Status: api.ContactVerificationRunStatus(r.Status),
		Provider: api.NewOptString(r.Provider), Total: int(r.Total), Processed: int(r.Processed),
		Counts: api.ContactVerificationCounts{Valid: int(r.Valid), Risky: int(r.Risky), Invalid: int(r.Invalid),
			Unknown: int(r.Unknown), Pending: max(int(r.Total-r.Processed), 0)},
		Error: api.NewOptString(r.Error), CreatedAt: r.CreatedAt,
	}
	out.StartedAt.SetToNull()
	if r.StartedAt != nil {
		out.StartedAt.SetTo(*r.StartedAt)
	}
	out.FinishedAt.SetToNull()
	if r.FinishedAt != nil {
		out.FinishedAt.SetTo(*r.FinishedAt)
	}
	return out
}
