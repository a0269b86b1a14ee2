package handlers

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	ht "github.com/ogen-go/ogen/http"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/agents/leadgate"
	"github.com/outflowhq/outflow/internal/audience/contactfile"
	"github.com/outflowhq/outflow/internal/audience/contactimport"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/truncate"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// ContactImport implements file imports: a preview of a CSV or XLSX file and the commit that loads it
// (internal/audience/contactimport). A commit is one transaction: the linked categories, campaigns and
// segments are checked, the file is loaded, one audit entry (contacts.imported) records the counts and the
// contacts.IndexArgs job puts the new rows into the search indexes; file imports raise no contact.created
// events.
//
// The file part arrives already buffered: ogen's multipart decoding (ParseMultipartForm) reads the whole
// body before the handler runs, up to 32 MB in memory and the rest in a temporary file. Past that, nothing
// holds the whole file (XLSX workbooks are unzipped in memory by excelize, which needs random access to the
// archive).
type ContactImport struct {
	pool   *pgxpool.Pool
	jobs   events.Inserter
	checks contactfile.Checks
	gate   *leadgate.Gate
}

// NewContactImport builds the import operations; jobs enqueues the follow-up work an import causes, and an
// agent's links to campaigns that send (or segments linked to one) go through gate.
func NewContactImport(pool *pgxpool.Pool, jobs events.Inserter, gate *leadgate.Gate) *ContactImport {
	return &ContactImport{pool: pool, jobs: jobs, gate: gate,
		checks: contactfile.Checks{Disposable: verify.IsDisposable, Role: verify.IsRoleAddress}}
}

// ContactsImportPreview reads an uploaded file without writing anything: its format, row count, columns,
// whether the first row is a header, up to 20 sample rows and a suggested mapping.
func (h *ContactImport) ContactsImportPreview(ctx context.Context, req *api.ContactsImportPreviewReq) (*api.ContactImportPreview, error) {
	if _, err := tenantCaller(ctx); err != nil {
		return nil, err
	}
	rows, format, err := openImportFile(req.File)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	p, err := contactfile.ReadPreview(rows)
	if err != nil {
		return nil, contactimport.FileError(err)
	}
	out := &api.ContactImportPreview{Filename: req.File.Name, Format: string(format), TotalRows: p.TotalRows,
		Columns: p.Columns, HasHeader: p.HasHeader, SampleRows: p.SampleRows,
		SuggestedMapping: make([]api.ContactImportColumnMapping, len(p.Mapping))}
	for i, c := range p.Mapping {
		m := api.ContactImportColumnMapping{Index: c.Index, Target: api.ContactImportColumnMappingTarget(c.Target)}
		if c.CustomKey != "" {
			m.CustomKey = api.NewOptString(c.CustomKey)
		}
		out.SuggestedMapping[i] = m
	}
	return out, nil
}

// openImportFile checks the uploaded file's size and opens a reader of its rows.
func openImportFile(f ht.MultipartFile) (contactfile.Rows, contactfile.Format, error) {
	if f.Size > contactfile.MaxFileBytes {
		return nil, "", apierror.BadRequest("file_too_large", fmt.Sprintf("The file is larger than %d MB.", contactfile.MaxFileBytes>>20))
	}
	if f.Size == 0 || f.File == nil {
		return nil, "", apierror.BadRequest("empty_file", "The file is empty.")
	}
	rows, format, err := contactfile.Open(f.File)
	if err != nil {
		return nil, "", contactimport.FileError(err)
	}
	return rows, format, nil
}

// ContactsImportCommit loads a file into the contact list (see ContactImport for how). Every 400 comes
// before any row is written; the whole import commits or nothing does. An API key's or OAuth grant's links to
// campaigns that send, and pins into segments linked to one, go through the lead gate: outside its policy
// they wait for a person and the answer is 202 with the approval (the contacts are imported either way).
func (h *ContactImport) ContactsImportCommit(ctx context.Context, req *api.ContactsImportCommitReq, _ api.ContactsImportCommitParams) (api.ContactsImportCommitRes, error) {
	started := time.Now().UTC()
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	opts, err := contactimport.ParseOptions(req.Options)
	if err != nil {
		return nil, err
	}
	rows, format, err := openImportFile(req.File)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	imp, err := contactimport.Start(rows, opts, h.checks, started)
	if err != nil {
		return nil, err
	}
	defer imp.Stop()
	op, err := newBulkOperation(events.NewOutbox(h.jobs), h.pool, org, events.BulkContactsImport)
	if err != nil {
		return nil, err
	}
	var out contactimport.Result
	var held *leadgate.Held
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := checkLinkRefs(ctx, tx, org, opts.CampaignIDs, opts.CategoryIDs, opts.SegmentIDs); err != nil {
			return err
		}
		p := auth.PrincipalFrom(ctx)
		campaigns, segments, err := h.gate.Scope(ctx, tx, p, dedupIDs(opts.CampaignIDs), dedupIDs(opts.SegmentIDs))
		if err != nil {
			return err
		}
		imp.Defer(campaigns, segments)
		// An agent's import may bring contacts into dynamic segments linked to campaigns: the gate compares what
		// the contacts it changes belonged to before with what they belong to after.
		watch, err := h.gate.Watch(ctx, tx, p, nil)
		if err != nil {
			return err
		}
		if watch.Reads() {
			imp.Watch(func(ctx context.Context, existing []uuid.UUID) error { return watch.Read(ctx, tx, existing) })
		}
		if out, err = imp.Load(ctx, tx, org); err != nil {
			return err
		}
		if out.Targets != nil {
			added, err := h.gate.Add(ctx, tx, p, leadgate.Request{Leads: leadsOf(out.Targets, campaigns), Pins: pinsOf(out.Targets, segments),
				Changed: out.Targets, Watch: watch, Event: "contacts.imported"}, time.Now())
			if err != nil {
				return err
			}
			out.Pinned, held = out.Pinned+added.Pinned, added.Held
		}
		report := imp.Report()
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionImport, Event: "contacts.imported", EntityType: audit.EntityContact,
			Metadata: map[string]any{"filename": truncate.Chars(req.File.Name, 255), "format": string(format), "dedup": opts.Dedup,
				"total": report.Total, "imported": out.Imported, "updated": out.Updated,
				"skipped": report.Repeats + out.Skipped, "failed": report.Failed}}); err != nil {
			return err
		}
		if err := op.done(ctx, tx, int64(report.Total), int64(report.Total-report.Failed), int64(report.Failed)); err != nil {
			return err
		}
		if out.Imported+out.Updated == 0 {
			return nil
		}
		_, err = h.jobs.InsertTx(ctx, tx, contacts.IndexArgs{OrganizationID: org, Analyze: out.Analyzed}, nil)
		return err
	})
	if err != nil {
		return nil, op.failed(ctx, err)
	}
	res := importResult(imp.Report(), out, opts, started)
	if held == nil {
		ok := api.ContactsImportCommitOK(*res)
		return &ok, nil
	}
	res.Approval = api.NewOptHeldLeads(heldLeads(held))
	accepted := api.ContactsImportCommitAccepted(*res)
	return &accepted, nil
}

// importResult assembles the response: whole-import notes first, then the file's failures and notes by line,
// at most MaxEntries in all.
func importResult(report contactfile.Report, out contactimport.Result, opts contactimport.Options, started time.Time) *api.ContactImportResult {
	res := &api.ContactImportResult{Total: report.Total, Imported: out.Imported, Updated: out.Updated,
		Skipped: report.Repeats + out.Skipped, Failed: report.Failed, StartedAt: started, EndedAt: time.Now().UTC(),
		Errors: []api.ContactImportRowError{}}
	for _, n := range out.Notes {
		res.Errors = append(res.Errors, api.ContactImportRowError{Line: 0, Reason: n})
	}
	truncated := report.Dropped > 0
	for _, e := range report.Entries {
		if len(res.Errors) >= contactfile.MaxEntries {
			truncated = true
			break
		}
		row := api.ContactImportRowError{Line: e.Line, Reason: e.Reason, Values: e.Values}
		if e.Email != "" {
			row.Email = api.NewOptString(e.Email)
		}
		res.Errors = append(res.Errors, row)
	}
	res.ErrorsTruncated = api.NewOptBool(truncated)
	if len(opts.SegmentIDs) > 0 {
		res.SegmentsPinned = api.NewOptInt(out.Pinned)
	}
	pct, flagged := report.Quality.BadShare(report.Total)
	res.Quality = api.NewOptContactImportQuality(api.ContactImportQuality{Malformed: report.Quality.Malformed,
		Disposable: report.Quality.Disposable, Role: report.Quality.Role, BadSharePct: pct, Flagged: flagged})
	return res
}
