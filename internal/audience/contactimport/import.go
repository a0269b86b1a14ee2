package contactimport

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contactfile"
	"github.com/outflowhq/outflow/internal/audience/contacts"
)

// Import is one commit's load of a file: Start reads its first rows before any transaction begins (so an
// empty file is refused early), Load writes it inside the caller's transaction.
type Import struct {
	opts    Options
	src     *source
	queries *dbq.Queries
	// deferred says Defer took links out of opts: Load then answers its targets.
	deferred bool
	// watch is called with the existing contacts the import is about to change (Watch).
	watch func(ctx context.Context, existing []uuid.UUID) error
}

// Watch asks Load to call fn once the file is staged and before any contact is written, with the
// organization's contacts the import is about to change or link (the primary contact of each staged
// address; none with dedup create_duplicate, which creates every row), and to answer every contact it
// wrote or linked in Result.Targets. An agent's import goes through the lead gate this way: what those
// contacts belonged to before is what it compares with after. Call it before Load.
func (im *Import) Watch(fn func(ctx context.Context, existing []uuid.UUID) error) { im.watch = fn }

// Defer takes campaigns and segments out of the links Load writes: Load answers the contacts they apply to in
// Result.Targets instead, for the caller to link (an agent's leads of campaigns that send go through the
// agent policy gate). Call it before Load.
func (im *Import) Defer(campaigns, segments []uuid.UUID) {
	if len(campaigns)+len(segments) == 0 {
		return
	}
	im.deferred = true
	im.opts.CampaignIDs = slices.DeleteFunc(slices.Clone(im.opts.CampaignIDs), func(id uuid.UUID) bool { return slices.Contains(campaigns, id) })
	im.opts.SegmentIDs = slices.DeleteFunc(slices.Clone(im.opts.SegmentIDs), func(id uuid.UUID) bool { return slices.Contains(segments, id) })
}

// Start begins an import of rows with opts: it reads the header (when the file has one) and the first data
// row, then starts parsing the rest in a goroutine. at is the verification_checked_at of imported verdicts.
// The caller must call Stop.
func Start(rows contactfile.Rows, opts Options, checks contactfile.Checks, at time.Time) (*Import, error) {
	src := &source{rows: rows, im: contactfile.NewImporter(opts.Columns, checks), plan: newPlan(opts.Columns), at: at,
		ids: contacts.NewIDs()}
	if err := src.start(opts.HasHeader); err != nil {
		return nil, err
	}
	return &Import{opts: opts, src: src, queries: dbq.New()}, nil
}

// Stop ends the parsing goroutine (Load ends it too); Report may be read after it.
func (im *Import) Stop() { im.src.stop() }

// Report is what parsing found: totals, repeats, failures and notes by line, quality counts. It is complete
// once Load or Stop has returned.
func (im *Import) Report() contactfile.Report { return im.src.im.Report() }

// Load stages the file's rows and writes them and their links into org's contacts in tx.
func (im *Import) Load(ctx context.Context, tx pgx.Tx, org uuid.UUID) (Result, error) {
	src := im.src
	if _, err := tx.Exec(ctx, workMemSQL); err != nil {
		return Result{}, err
	}
	if _, err := tx.Exec(ctx, src.plan.createSQL()); err != nil {
		return Result{}, fmt.Errorf("create import staging: %w", err)
	}
	_, err := tx.Conn().PgConn().CopyFrom(ctx, src, src.plan.copySQL())
	src.stop() // the reader has finished, or gives up when COPY failed early
	if err != nil {
		if src.err != nil {
			return Result{}, src.err // why the source stopped (too many rows, an unreadable row); COPY reports only that it failed
		}
		return Result{}, fmt.Errorf("stage import rows: %w", err)
	}
	return im.load(ctx, tx, org)
}
