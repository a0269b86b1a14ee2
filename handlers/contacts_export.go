package handlers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Limits of an export (part 1, Limits: "Export: at most 50,000 rows").
const (
	maxExportRows        = 50000
	maxExportFields      = 200
	maxExportFilenameLen = 100
	// exportWriteWindow is how long the client may take to accept each part of the file: the write deadline
	// moves on with every batch, so a download that progresses is not cut by the server's WriteTimeout and one
	// that stalls still is.
	exportWriteWindow = time.Minute
)

// ContactExport streams contacts out as CSV, XLSX or JSON. A file is never built in memory: rows are read in
// batches of 1000 (contacts.Stream) and each batch is written and flushed to the client before the next is
// read (XLSX spools its sheet first, see xlsxExport), so the server's memory stays flat whatever the row count
// (BenchmarkContactExport measures it).
type ContactExport struct {
	pool *pgxpool.Pool
	// logger records exports that fail after the first byte went out, when the failure can no longer be
	// answered with an error status.
	logger *slog.Logger
}

// NewContactExport builds the export operation; failures after the first byte are logged to logger.
func NewContactExport(pool *pgxpool.Pool, logger *slog.Logger) *ContactExport {
	return &ContactExport{pool: pool, logger: logger}
}

// ContactsExport answers POST /contacts/export with the file itself.
//
// Everything that can be refused is checked before the first byte: the body (format, scope, fields, ids,
// filters), then the row count against the 50,000 cap, inside the same read-only REPEATABLE READ transaction
// that streams the rows, so the count in X-Total-Rows and every batch see one snapshot. The status and headers
// go out with the first byte (after the first batch was read), so a failure up to then is still an error
// envelope. A failure after it cannot change the status any more: it is logged and the connection is aborted
// (panic(http.ErrAbortHandler)), so the client sees a truncated transfer instead of a file that looks whole.
func (h *ContactExport) ContactsExport(ctx context.Context, req *api.ContactExportRequest, w http.ResponseWriter) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	plan, err := parseExport(req, time.Now())
	if err != nil {
		return err
	}
	out := &exportResponse{w: w, plan: plan}
	err = db.WithOrgTx(ctx, snapshot{h.pool}, org, func(ctx context.Context, tx pgx.Tx) error {
		total, err := plan.count(ctx, tx, org)
		if err != nil {
			return err
		}
		out.total = total
		return plan.stream(ctx, tx, org, total, out)
	})
	if err != nil && out.started {
		level := slog.LevelError
		if ctx.Err() != nil {
			level = slog.LevelInfo // the client went away
		}
		h.logger.Log(ctx, level, "contact export aborted after the first byte",
			slog.String("request_id", reqctx.ID(ctx)), slog.String("error", err.Error()))
		panic(http.ErrAbortHandler)
	}
	return err
}

// exportPlan is a validated export request.
type exportPlan struct {
	format api.ContactExportRequestFormat
	// filter selects the rows (the zero Filter for scope all); ids narrows them for scope selected.
	filter  contacts.Filter
	ids     []uuid.UUID
	columns []exportColumn
	// views: some column needs a contact's campaigns, categories or campaign lead (contactViews per batch).
	views bool
	// campaign is the one campaign the filters name when a lead column is asked for.
	campaign *uuid.UUID
	filename string
}

// exportColumn is one column of the file: its identifier (the header) and how a row's value is read. A value
// is a string, bool, int or nil (blank).
type exportColumn struct {
	name  string
	value func(r *contacts.Row, v *api.Contact) any
	// view: the value comes from the contact's view (campaigns, categories, campaign lead).
	view bool
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// exportBuiltins are the columns named by a plain identifier.
var exportBuiltins = map[string]exportColumn{
	"id":                      {value: func(r *contacts.Row, _ *api.Contact) any { return r.ID.String() }},
	"email":                   {value: func(r *contacts.Row, _ *api.Contact) any { return r.Email }},
	"first_name":              {value: func(r *contacts.Row, _ *api.Contact) any { return r.FirstName }},
	"last_name":               {value: func(r *contacts.Row, _ *api.Contact) any { return r.LastName }},
	"company":                 {value: func(r *contacts.Row, _ *api.Contact) any { return r.Company }},
	"phone":                   {value: func(r *contacts.Row, _ *api.Contact) any { return r.Phone }},
	"subscribed":              {value: func(r *contacts.Row, _ *api.Contact) any { return r.Subscribed }},
	"verification_status":     {value: func(r *contacts.Row, _ *api.Contact) any { return r.VerificationStatus }},
	"verification_sub_status": {value: func(r *contacts.Row, _ *api.Contact) any { return r.VerificationSubStatus }},
	"verification_source":     {value: func(r *contacts.Row, _ *api.Contact) any { return r.VerificationSource }},
	"verification_provider":   {value: func(r *contacts.Row, _ *api.Contact) any { return r.VerificationProvider }},
	"verification_confidence": {value: func(r *contacts.Row, _ *api.Contact) any { return int(r.VerificationConfidence) }},
	"is_catch_all":            {value: func(r *contacts.Row, _ *api.Contact) any { return r.IsCatchAll }},
	"esp_provider":            {value: func(r *contacts.Row, _ *api.Contact) any { return r.ESPProvider }},
	"campaign_count":          {value: func(r *contacts.Row, _ *api.Contact) any { return int(r.CampaignCount) }},
	"created_at":              {value: func(r *contacts.Row, _ *api.Contact) any { return rfc3339(r.CreatedAt) }},
	"updated_at":              {value: func(r *contacts.Row, _ *api.Contact) any { return rfc3339(r.UpdatedAt) }},
	"campaigns": {view: true, value: func(_ *contacts.Row, v *api.Contact) any {
		names := make([]string, len(v.Campaigns))
		for i, c := range v.Campaigns {
			names[i] = c.Name
		}
		return strings.Join(names, "; ")
	}},
	"categories": {view: true, value: func(_ *contacts.Row, v *api.Contact) any {
		titles := make([]string, len(v.Categories))
		for i, c := range v.Categories {
			titles[i] = c.Title
		}
		return strings.Join(titles, "; ")
	}},
}

// leadColumn reads the contact's progress in the one campaign the filters name; blank when there is none.
func leadColumn(read func(p api.ContactCampaignProgress) any) exportColumn {
	return exportColumn{view: true, value: func(_ *contacts.Row, v *api.Contact) any {
		p, ok := v.CampaignLead.Get()
		if !ok {
			return nil
		}
		return read(p)
	}}
}

// exportLeadColumns are blank unless the filters name exactly one campaign. lead_opened counts human opens,
// lead_clicked clicks and lead_replied replies.
var exportLeadColumns = map[string]exportColumn{
	"lead_status":  leadColumn(func(p api.ContactCampaignProgress) any { return string(p.Status) }),
	"lead_opened":  leadColumn(func(p api.ContactCampaignProgress) any { return p.Opened }),
	"lead_clicked": leadColumn(func(p api.ContactCampaignProgress) any { return p.Clicked }),
	"lead_replied": leadColumn(func(p api.ContactCampaignProgress) any { return p.Replied }),
}

// defaultExportFields are the columns of an export that names none.
var defaultExportFields = []string{"email", "first_name", "last_name", "company", "phone", "subscribed",
	"verification_status", "categories", "created_at"}

const customFieldPrefix = "custom:"

// exportFieldNames lists the identifiers an error message offers.
func exportFieldNames() string {
	names := make([]string, 0, len(exportBuiltins)+len(exportLeadColumns))
	for n := range exportBuiltins {
		names = append(names, n)
	}
	for n := range exportLeadColumns {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// parseExport validates the whole request; nothing is read or written before it passes. now names the default
// file.
func parseExport(req *api.ContactExportRequest, now time.Time) (*exportPlan, error) {
	p := &exportPlan{format: req.Format}
	switch req.Scope {
	case api.ContactExportRequestScopeAll:
		// Every contact: filters (and contact_ids) are ignored.
	case api.ContactExportRequestScopeFiltered:
		f, err := contacts.ParseSearch(searchInput(req.Filters.Value))
		if err != nil {
			return nil, err
		}
		p.filter = f
	case api.ContactExportRequestScopeSelected:
		if len(req.ContactIds) == 0 {
			return nil, apierror.BadRequest("invalid_selection", "scope selected needs contact_ids (1 to 50,000 ids).")
		}
		if len(req.ContactIds) > maxExportRows {
			return nil, apierror.BadRequest("export_too_large", fmt.Sprintf(
				"contact_ids has %d ids; an export has at most %d rows. Split the ids over several exports.", len(req.ContactIds), maxExportRows))
		}
		if req.Filters.Set {
			f, err := contacts.ParseSearch(searchInput(req.Filters.Value))
			if err != nil {
				return nil, err
			}
			p.filter = f
		}
		p.ids = req.ContactIds
	default:
		return nil, apierror.BadRequest("invalid_scope", "scope must be all, filtered or selected.")
	}
	if err := p.parseFields(req.Fields); err != nil {
		return nil, err
	}
	p.filename = exportFilename(req.Filename.Value, now) + "." + string(req.Format)
	return p, nil
}

func (p *exportPlan) parseFields(fields []string) error {
	if len(fields) == 0 {
		fields = defaultExportFields
	}
	if len(fields) > maxExportFields {
		return apierror.BadRequest("invalid_fields", fmt.Sprintf("fields takes at most %d columns.", maxExportFields))
	}
	lead := false
	for i, name := range fields {
		if slices.Contains(fields[:i], name) {
			return apierror.BadRequest("invalid_fields", fmt.Sprintf("fields names %q twice.", truncate.Chars(name, 80)))
		}
		col, ok := exportBuiltins[name]
		if !ok {
			col, ok = exportLeadColumns[name]
			lead = lead || ok
		}
		if key, custom := strings.CutPrefix(name, customFieldPrefix); custom {
			if !contacts.ValidCustomKey(key) {
				return apierror.BadRequest("invalid_fields", fmt.Sprintf(
					"%q: a custom-field key has 1 to %d letters, digits, underscores, spaces and dashes.", truncate.Chars(name, 80), contacts.MaxCustomKeyLen))
			}
			col, ok = exportColumn{value: func(r *contacts.Row, _ *api.Contact) any {
				if v, ok := r.CustomFields[key]; ok {
					return v
				}
				return nil
			}}, true
		}
		if !ok {
			return apierror.BadRequest("invalid_fields", fmt.Sprintf(
				"Unknown field %q. Use custom:<key> for a custom field, or one of: %s.", truncate.Chars(name, 80), exportFieldNames()))
		}
		col.name = name
		p.views = p.views || col.view
		p.columns = append(p.columns, col)
	}
	if id, ok := p.filter.OneCampaign(); ok && lead {
		p.campaign = &id
	}
	return nil
}

// exportFilename sanitises a requested file name (without extension): ASCII letters, digits, dash, underscore
// and dot are kept, a space becomes a dash, everything else (path separators, quotes, control and non-ASCII
// characters) is dropped; leading and trailing dots go, and so does the format's extension when the name
// already ends with one (the caller appends it). At most 100 characters; an empty result is contacts-<date>
// in UTC.
func exportFilename(raw string, now time.Time) string {
	var b strings.Builder
	for _, c := range raw {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			b.WriteRune(c)
		case c == ' ':
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), ".")
	for _, ext := range []string{".csv", ".xlsx", ".json"} {
		if len(name) >= len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext) {
			name = strings.Trim(name[:len(name)-len(ext)], ".")
			break
		}
	}
	if len(name) > maxExportFilenameLen {
		name = strings.TrimRight(name[:maxExportFilenameLen], ".")
	}
	if name == "" {
		name = "contacts-" + now.UTC().Format(time.DateOnly)
	}
	return name
}

// count is the number of rows the export will have, refused above the cap. Scope all reads the kept org-wide
// total, filtered counts the filter, selected counts the ids that exist and match the filters (at most 50,000
// by then, read in batches).
func (p *exportPlan) count(ctx context.Context, q contacts.Querier, org uuid.UUID) (int64, error) {
	var n int64
	if p.ids != nil {
		err := contacts.Stream(ctx, q, org, p.filter, p.ids, maxExportRows, func(contacts.Row) error {
			n++
			return nil
		})
		return n, err
	}
	n, err := contacts.Count(ctx, q, org, p.filter)
	if err != nil {
		return 0, err
	}
	if n > maxExportRows {
		hint := "Export with scope filtered and filters that narrow it (for example created_after and created_before, category_ids or campaign_ids), in several parts."
		if !p.filter.Empty() {
			hint = "Narrow the filters (for example with created_after and created_before) and export in several parts."
		}
		return 0, apierror.BadRequest("export_too_large", fmt.Sprintf("The export would have %d rows; at most %d can be exported at once. %s", n, maxExportRows, hint))
	}
	return n, nil
}

// stream writes the file: the header row, then each batch of rows as Stream reads them (at most total, the
// count this snapshot agreed to), flushed to the client batch by batch.
func (p *exportPlan) stream(ctx context.Context, q dbq.DBTX, org uuid.UUID, total int64, out *exportResponse) error {
	bw := bufio.NewWriterSize(out, 64<<10)
	enc, err := newExportEncoder(p.format, bw, out)
	if err != nil {
		return err
	}
	defer enc.close()
	names := make([]string, len(p.columns))
	for i, c := range p.columns {
		names[i] = c.name
	}
	if err := enc.header(names); err != nil {
		return err
	}
	const batchSize = 1000
	batch := make([]contacts.Row, 0, batchSize)
	vals := make([]any, len(p.columns))
	write := func() error {
		var views []api.Contact
		if p.views {
			var err error
			if views, err = contactViews(ctx, q, org, batch, p.campaign); err != nil {
				return err
			}
		}
		for i := range batch {
			var v *api.Contact
			if views != nil {
				v = &views[i]
			}
			for j, c := range p.columns {
				vals[j] = c.value(&batch[i], v)
			}
			if err := enc.row(vals); err != nil {
				return err
			}
		}
		batch = batch[:0]
		if err := enc.flush(); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		return out.flush()
	}
	err = contacts.Stream(ctx, q, org, p.filter, p.ids, int(total), func(r contacts.Row) error {
		batch = append(batch, r)
		if len(batch) == batchSize {
			return write()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(batch) > 0 {
		if err := write(); err != nil {
			return err
		}
	}
	if err := enc.finish(); err != nil {
		return err
	}
	return bw.Flush()
}

// exportResponse is the response writer of an export: the status and headers go out with the first byte, so
// anything that fails before it is still answered as an error envelope.
type exportResponse struct {
	w       http.ResponseWriter
	plan    *exportPlan
	total   int64
	started bool
}

var exportContentTypes = map[api.ContactExportRequestFormat]string{
	api.ContactExportRequestFormatCsv:  "text/csv; charset=utf-8",
	api.ContactExportRequestFormatXlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	api.ContactExportRequestFormatJSON: "application/json",
}

func (r *exportResponse) Write(b []byte) (int, error) {
	if !r.started {
		r.started = true
		h := r.w.Header()
		h.Set("Content-Type", exportContentTypes[r.plan.format])
		// The sanitised name has no quote, backslash or control character to escape.
		h.Set("Content-Disposition", `attachment; filename="`+r.plan.filename+`"`)
		h.Set("X-Total-Rows", strconv.FormatInt(r.total, 10))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store") // personal data
		r.w.WriteHeader(http.StatusOK)
		if err := r.extendDeadline(); err != nil {
			return 0, err
		}
	}
	return r.w.Write(b)
}

func (r *exportResponse) extendDeadline() error {
	err := http.NewResponseController(r.w).SetWriteDeadline(time.Now().Add(exportWriteWindow))
	if errors.Is(err, http.ErrNotSupported) {
		return nil
	}
	return err
}

// flush pushes what was written to the client and gives it another exportWriteWindow for the next part.
// Before the first byte it does nothing: flushing would send the status and headers early.
func (r *exportResponse) flush() error {
	if !r.started {
		return nil
	}
	if err := http.NewResponseController(r.w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return r.extendDeadline()
}
