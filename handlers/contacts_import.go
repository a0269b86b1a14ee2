package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	ht "github.com/ogen-go/ogen/http"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contactfile"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/truncate"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// ContactImport implements file imports: a preview of a CSV or XLSX file and the commit that loads it.
//
// A commit is one transaction: it checks the linked categories, campaigns and segments, streams the accepted
// rows into a temporary staging table with COPY while the file is still being parsed (only the columns the
// mapping fills; see importPlan), then writes contacts with set-based statements for the dedup mode (an
// organization's first import skips the per-row check against existing addresses) and the links with one
// statement each. New and updated rows are written with search_ready false, which keeps them out of the
// trigram and sort indexes, and recorded in contact_index_pending (the new rows' id range, each updated id),
// where searches find them; the contacts.IndexArgs job enqueued in the same transaction puts them in right
// after. File imports raise no contact.created events; one audit entry (contacts.imported) records the counts.
//
// The file part arrives already buffered: ogen's multipart decoding (ParseMultipartForm) reads the whole
// body before the handler runs, up to 32 MB in memory and the rest in a temporary file. Past that, nothing
// here holds the whole file: rows are read and loaded one at a time (XLSX workbooks are unzipped in memory
// by excelize, which needs random access to the archive).
type ContactImport struct {
	pool    *pgxpool.Pool
	jobs    events.Inserter
	queries *dbq.Queries
	checks  contactfile.Checks
}

// NewContactImport builds the import operations; jobs enqueues the follow-up work an import causes.
func NewContactImport(pool *pgxpool.Pool, jobs events.Inserter) *ContactImport {
	return &ContactImport{pool: pool, jobs: jobs, queries: dbq.New(),
		checks: contactfile.Checks{Disposable: verify.IsDisposable, Role: verify.IsRoleAddress}}
}

// Limits of an import commit's options.
const (
	// maxImportLinkIDs caps each of category_ids, campaign_ids and segment_ids: every id becomes one link
	// row per contact of the file.
	maxImportLinkIDs = 50
	// maxImportColumn is the highest column index a mapping may name (a workbook's last column).
	maxImportColumn = 16383
	// maxNewCategories is how many categories one import creates from a categories column; names beyond are
	// reported and not linked.
	maxNewCategories = 100
	// maxNamesInNote caps the names a whole-import note lists.
	maxNamesInNote = 20
)

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
		return nil, importFileError(err)
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
		return nil, "", importFileError(err)
	}
	return rows, format, nil
}

// importFileError maps a file reading failure to the API's error.
func importFileError(err error) error {
	switch {
	case errors.Is(err, contactfile.ErrEmpty):
		return apierror.BadRequest("empty_file", "The file has no rows.")
	case errors.Is(err, contactfile.ErrUnsupported):
		return apierror.BadRequest("unsupported_format", "Upload a CSV or XLSX file: "+err.Error()+".")
	case errors.Is(err, contactfile.ErrUnreadable):
		return apierror.BadRequest("unreadable_file", "The file could not be read: "+err.Error()+".")
	}
	return err
}

// importOptionsBody is the options part of a commit as sent. Pointers tell a missing field from a zero one.
type importOptionsBody struct {
	Mapping []struct {
		Index                *int   `json:"index"`
		Target               string `json:"target"`
		CustomKey            string `json:"custom_key"`
		VerificationProvider string `json:"verification_provider"`
	} `json:"mapping"`
	Dedup             string   `json:"dedup"`
	HasHeader         *bool    `json:"has_header"`
	CategoryIDs       []string `json:"category_ids"`
	CampaignIDs       []string `json:"campaign_ids"`
	SegmentIDs        []string `json:"segment_ids"`
	SubscribedDefault *bool    `json:"subscribed_default"`
}

// importOptions are a commit's validated options.
type importOptions struct {
	columns           []contactfile.Column
	dedup             string
	hasHeader         bool
	categoryIDs       []uuid.UUID
	campaignIDs       []uuid.UUID
	segmentIDs        []uuid.UUID
	subscribedDefault bool
}

// The dedup modes: what a row whose address the organization already has does.
const (
	dedupSkip            = "skip"
	dedupUpdate          = "update"
	dedupCreateDuplicate = "create_duplicate"
)

// parseImportOptions validates the options part; every error is a 400 that leaves nothing written.
func parseImportOptions(raw string) (importOptions, error) {
	var body importOptionsBody
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return importOptions{}, apierror.BadRequest("invalid_options", "options must be a JSON object of the import options: "+err.Error()+".")
	}
	if dec.More() {
		return importOptions{}, apierror.BadRequest("invalid_options", "options must be one JSON object.")
	}
	columns, err := importColumns(body)
	if err != nil {
		return importOptions{}, err
	}
	out := importOptions{columns: columns, dedup: body.Dedup, subscribedDefault: true}
	switch body.Dedup {
	case dedupSkip, dedupUpdate, dedupCreateDuplicate:
	case "":
		return importOptions{}, apierror.BadRequest("invalid_dedup", "dedup is required: skip, update or create_duplicate.")
	default:
		return importOptions{}, apierror.BadRequest("invalid_dedup", fmt.Sprintf("dedup %q is not skip, update or create_duplicate.", truncate.Chars(body.Dedup, 40)))
	}
	if body.HasHeader == nil {
		return importOptions{}, apierror.BadRequest("invalid_options", "has_header is required (true when the file's first row names the columns).")
	}
	out.hasHeader = *body.HasHeader
	if body.SubscribedDefault != nil {
		out.subscribedDefault = *body.SubscribedDefault
	}
	for _, l := range []struct {
		field, code string
		raw         []string
		ids         *[]uuid.UUID
	}{
		{"category_ids", "unknown_category", body.CategoryIDs, &out.categoryIDs},
		{"campaign_ids", "unknown_campaign", body.CampaignIDs, &out.campaignIDs},
		{"segment_ids", "unknown_segment", body.SegmentIDs, &out.segmentIDs},
	} {
		if *l.ids, err = importLinkIDs(l.field, l.code, l.raw); err != nil {
			return importOptions{}, err
		}
	}
	return out, nil
}

// importColumns validates the mapping: indexes in range and not repeated, known targets, exactly one email
// column, built-in targets at most once, custom columns with a valid key each, providers only on a
// verification_status column and known.
func importColumns(body importOptionsBody) ([]contactfile.Column, error) {
	if len(body.Mapping) == 0 {
		return nil, apierror.BadRequest("invalid_mapping", "mapping is required: one entry per column to import, exactly one of them email.")
	}
	var columns []contactfile.Column
	indexes := map[int]bool{}
	targets := map[contactfile.Target]bool{}
	keys := map[string]string{}
	for _, m := range body.Mapping {
		if m.Index == nil || *m.Index < 0 || *m.Index > maxImportColumn {
			return nil, apierror.BadRequest("invalid_mapping", fmt.Sprintf("Every mapping entry needs an index from 0 to %d.", maxImportColumn))
		}
		if indexes[*m.Index] {
			return nil, apierror.BadRequest("invalid_mapping", fmt.Sprintf("Column %d is mapped twice.", *m.Index))
		}
		indexes[*m.Index] = true
		c := contactfile.Column{Index: *m.Index, Target: contactfile.Target(m.Target), CustomKey: m.CustomKey,
			Provider: strings.ToLower(strings.TrimSpace(m.VerificationProvider))}
		if key, ok := strings.CutPrefix(m.Target, "custom:"); ok {
			if c.CustomKey != "" && c.CustomKey != key {
				return nil, apierror.BadRequest("invalid_custom_field", fmt.Sprintf("Column %d names two custom keys.", c.Index))
			}
			c.Target, c.CustomKey = contactfile.TargetCustom, key
		}
		if !slices.Contains(contactfile.Targets, c.Target) {
			return nil, apierror.BadRequest("invalid_mapping", fmt.Sprintf("Column %d: target %q is not one of ignore, email, first_name, last_name, company, phone, subscribed, categories, verification_status, custom.", c.Index, truncate.Chars(m.Target, 40)))
		}
		switch c.Target {
		case contactfile.TargetIgnore:
			continue
		case contactfile.TargetCustom:
			if c.CustomKey == "" {
				return nil, apierror.BadRequest("invalid_custom_field", fmt.Sprintf("Column %d maps to custom without a custom_key.", c.Index))
			}
			if err := contacts.CheckCustomFields(map[string]string{c.CustomKey: ""}); err != nil {
				return nil, err
			}
			if prev, dup := keys[strings.ToLower(c.CustomKey)]; dup {
				return nil, apierror.BadRequest("invalid_custom_field", fmt.Sprintf("Custom field %q is mapped from two columns (%s).", c.CustomKey, prev))
			}
			keys[strings.ToLower(c.CustomKey)] = fmt.Sprint(c.Index)
		default:
			if c.CustomKey != "" {
				return nil, apierror.BadRequest("invalid_mapping", fmt.Sprintf("Column %d: custom_key goes only with target custom.", c.Index))
			}
			if targets[c.Target] {
				return nil, apierror.BadRequest("invalid_mapping", fmt.Sprintf("Two columns map to %s; map it from one column.", c.Target))
			}
			targets[c.Target] = true
		}
		if c.Provider != "" {
			if c.Target != contactfile.TargetVerificationStatus {
				return nil, apierror.BadRequest("invalid_mapping", fmt.Sprintf("Column %d: verification_provider goes only with target verification_status.", c.Index))
			}
			if !contacts.KnownProvider(c.Provider) {
				return nil, apierror.BadRequest("unknown_verification_provider", fmt.Sprintf("verification_provider %q is not one of %s.",
					truncate.Chars(c.Provider, 64), strings.Join(contacts.Providers(), ", ")))
			}
		}
		columns = append(columns, c)
	}
	if len(keys) > contacts.MaxCustomFields {
		return nil, apierror.BadRequest("too_many_custom_fields", fmt.Sprintf("A contact has at most %d custom fields.", contacts.MaxCustomFields))
	}
	if !targets[contactfile.TargetEmail] {
		return nil, apierror.BadRequest("invalid_mapping", "Map exactly one column to email.")
	}
	return columns, nil
}

// importLinkIDs parses one id list of the options, dropping repeats; a non-UUID is code.
func importLinkIDs(field, code string, raw []string) ([]uuid.UUID, error) {
	if len(raw) > maxImportLinkIDs {
		return nil, apierror.BadRequest("too_many_ids", fmt.Sprintf("%s takes at most %d ids.", field, maxImportLinkIDs))
	}
	var out []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, s := range raw {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, apierror.BadRequest(code, fmt.Sprintf("%s: %q is not an id.", field, truncate.Chars(s, 64)))
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

// ContactsImportCommit loads a file into the contact list (see ContactImport for how). Every 400 comes
// before any row is written; the whole import commits or nothing does.
func (h *ContactImport) ContactsImportCommit(ctx context.Context, req *api.ContactsImportCommitReq, _ api.ContactsImportCommitParams) (*api.ContactImportResult, error) {
	started := time.Now().UTC()
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	opts, err := parseImportOptions(req.Options)
	if err != nil {
		return nil, err
	}
	rows, format, err := openImportFile(req.File)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	src := &importSource{rows: rows, im: contactfile.NewImporter(opts.columns, h.checks), plan: newImportPlan(opts.columns), at: started,
		ids: contacts.NewIDs()}
	if err := src.start(opts.hasHeader); err != nil {
		return nil, err
	}
	defer src.stop()
	var out loadResult
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := checkLinkRefs(ctx, tx, org, opts.campaignIDs, opts.categoryIDs, opts.segmentIDs); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, importWorkMem); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, src.plan.createSQL()); err != nil {
			return fmt.Errorf("create import staging: %w", err)
		}
		_, err := tx.Conn().PgConn().CopyFrom(ctx, src, src.plan.copySQL())
		src.stop() // the reader has finished, or gives up when COPY failed early
		if err != nil {
			if src.err != nil {
				return src.err // why the source stopped (too many rows, an unreadable row); COPY reports only that it failed
			}
			return fmt.Errorf("stage import rows: %w", err)
		}
		if out, err = h.load(ctx, tx, org, opts, src); err != nil {
			return err
		}
		report := src.im.Report()
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionImport, Event: "contacts.imported", EntityType: audit.EntityContact,
			Metadata: map[string]any{"filename": truncate.Chars(req.File.Name, 255), "format": string(format), "dedup": opts.dedup,
				"total": report.Total, "imported": out.imported, "updated": out.updated,
				"skipped": report.Repeats + out.skipped, "failed": report.Failed}}); err != nil {
			return err
		}
		if out.imported+out.updated == 0 {
			return nil
		}
		_, err = h.jobs.InsertTx(ctx, tx, contacts.IndexArgs{OrganizationID: org}, nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	return importResult(src.im.Report(), out, opts, started), nil
}

// importResult assembles the response: whole-import notes first, then the file's failures and notes by line,
// at most MaxEntries in all.
func importResult(report contactfile.Report, out loadResult, opts importOptions, started time.Time) *api.ContactImportResult {
	res := &api.ContactImportResult{Total: report.Total, Imported: out.imported, Updated: out.updated,
		Skipped: report.Repeats + out.skipped, Failed: report.Failed, StartedAt: started, EndedAt: time.Now().UTC(),
		Errors: []api.ContactImportRowError{}}
	for _, n := range out.notes {
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
	if len(opts.segmentIDs) > 0 {
		res.SegmentsPinned = api.NewOptInt(out.pinned)
	}
	pct, flagged := report.Quality.BadShare(report.Total)
	res.Quality = api.NewOptContactImportQuality(api.ContactImportQuality{Malformed: report.Quality.Malformed,
		Disposable: report.Quality.Disposable, Role: report.Quality.Role, BadSharePct: pct, Flagged: flagged})
	return res
}

// importSource feeds COPY: a reader goroutine (read) parses the file's data rows through the importer and
// hands the accepted ones over in batches, and Read encodes them as staging rows in COPY's binary format
// (see contacts_import_copy.go). Parsing, encoding and Postgres's loading run at the same time, and parsing
// starts while the transaction is still being set up.
type importSource struct {
	rows contactfile.Rows
	im   *contactfile.Importer
	plan importPlan
	// at is the verification_checked_at of imported verdicts.
	at  time.Time
	ids *contacts.IDs

	// Owned by the reader goroutine until it closes batches.
	first     []string // the first data row, read by start
	firstLine int
	data      int   // data rows read
	readErr   error // why reading stopped early (too many rows, an unreadable row)

	batches  chan []contactfile.Contact
	quit     chan struct{} // closed by stop: the reader gives up
	stopOnce sync.Once
	finished sync.WaitGroup

	// Owned by Read.
	batch  []contactfile.Contact // the rest of the batch being encoded
	staged int                   // rows handed to COPY
	// lo and hi bound the ids of the staged rows (contact_index_pending records them for the new ones).
	lo, hi uuid.UUID
	// buf holds encoded rows not yet read; pending is its unread part.
	buf, pending []byte
	done         bool
	err          error
}

// readBatch is how many accepted rows the reader hands over at a time, and readAhead how many batches it
// may be ahead of the encoder.
const (
	readBatch = 256
	readAhead = 8
)

// copyChunk is how much encoded data Read prepares at a time.
const copyChunk = 64 << 10

// start reads the header (when the file has one) and the first data row, so an empty file is refused before
// the transaction begins, and then starts the reader goroutine; the caller must stop it.
func (s *importSource) start(hasHeader bool) error {
	cells, err := s.rows.Next()
	if hasHeader && err == nil {
		cells, err = s.rows.Next()
	}
	if errors.Is(err, io.EOF) {
		return apierror.BadRequest("empty_file", "The file has no data rows.")
	}
	if err != nil {
		return importFileError(err)
	}
	s.first, s.firstLine = cells, s.rows.Line()
	s.batches, s.quit = make(chan []contactfile.Contact, readAhead), make(chan struct{})
	s.finished.Go(s.read)
	return nil
}

// stop makes the reader goroutine give up (when COPY ended early) and waits for it. After stop, the
// importer's report and readErr may be read.
func (s *importSource) stop() {
	s.stopOnce.Do(func() { close(s.quit) })
	s.finished.Wait()
}

// read is the reader goroutine: it parses rows until the file ends, reading fails or stop is called, and
// closes batches when done.
func (s *importSource) read() {
	defer close(s.batches)
	batch := make([]contactfile.Contact, 0, readBatch)
	for {
		c, ok := s.nextContact()
		if ok {
			batch = append(batch, c)
		}
		if len(batch) == readBatch || !ok && len(batch) > 0 {
			select {
			case s.batches <- batch:
			case <-s.quit:
				return
			}
			batch = make([]contactfile.Contact, 0, readBatch)
		}
		if !ok {
			return
		}
	}
}

func (s *importSource) next() ([]string, int, bool) {
	if s.first != nil {
		cells := s.first
		s.first = nil
		return cells, s.firstLine, true
	}
	cells, err := s.rows.Next()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			s.readErr = importFileError(err)
		}
		return nil, 0, false
	}
	return cells, s.rows.Line(), true
}

// nextContact returns the next accepted row.
func (s *importSource) nextContact() (contactfile.Contact, bool) {
	for {
		cells, line, ok := s.next()
		if !ok {
			return contactfile.Contact{}, false
		}
		if s.data++; s.data > contactfile.MaxRows {
			s.readErr = apierror.BadRequest("too_many_rows", fmt.Sprintf("An import takes at most %d rows; split the file.", contactfile.MaxRows))
			return contactfile.Contact{}, false
		}
		if c, ok := s.im.Row(line, cells); ok {
			return c, true
		}
	}
}

// Read implements io.Reader for COPY: the stream's header, the accepted rows, its trailer. It fails with
// the reader's error when the file could not be read to the end (COPY then fails, and the caller reports
// s.err).
func (s *importSource) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.done {
			return 0, io.EOF
		}
		s.fill()
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// fill encodes the next rows into buf, up to copyChunk bytes.
func (s *importSource) fill() {
	b := s.buf[:0]
	if s.buf == nil {
		b = append(make([]byte, 0, copyChunk+4096), copyHeader...)
	}
	for len(b) < copyChunk {
		if len(s.batch) == 0 {
			batch, ok := <-s.batches
			if !ok {
				// The reader has returned (closing batches is its last act), so readErr is settled.
				if s.err = s.readErr; s.err == nil {
					b = append(b, copyTrailer...)
					s.done = true
				}
				break
			}
			s.batch = batch
		}
		c := s.batch[0]
		s.batch = s.batch[1:]
		if b, s.err = s.stage(b, c); s.err != nil {
			break
		}
	}
	s.buf, s.pending = b, b
}

// stage appends an accepted row's staging columns (importPlan.columns order) to b.
func (s *importSource) stage(b []byte, c contactfile.Contact) ([]byte, error) {
	id, createdAt, err := s.ids.Next()
	if err != nil {
		return b, err
	}
	if s.staged == 0 || bytes.Compare(id[:], s.lo[:]) < 0 {
		s.lo = id
	}
	if bytes.Compare(id[:], s.hi[:]) > 0 {
		s.hi = id
	}
	b = copyRowStart(b, len(s.plan.columns))
	b = copyText(copyTime(copyUUID(b, id), createdAt), c.Email)
	for _, f := range s.plan.fields {
		b = f.encode(b, c, s.at)
	}
	s.staged++
	return b, nil
}

// stagedField is the staging columns one mapping target fills, with what a new contact and an updated one
// take from them. An import stages only the fields its mapping names, so COPY and the set-based writes move
// no more than the file brings (a column costs about 10 ms per 50,000 rows in COPY alone).
type stagedField struct {
	target contactfile.Target
	// columns are the staging columns with their types, in COPY order.
	columns []string
	// encode appends a row's values for columns in COPY's binary format.
	encode func(b []byte, c contactfile.Contact, at time.Time) []byte
	// insert pairs contacts columns with the expressions a new row takes from the staging row s.
	insert [][2]string
	// update are the SET clauses an existing contact c gets from s: sent values replace, empty ones keep.
	update []string
}

// textField stages one text column that replaces the stored value when the cell is not empty.
func textField(target contactfile.Target, column string, value func(c contactfile.Contact) string) stagedField {
	return stagedField{target: target, columns: []string{column + " text NOT NULL"},
		encode: func(b []byte, c contactfile.Contact, _ time.Time) []byte { return copyText(b, value(c)) },
		insert: [][2]string{{column, "s." + column}},
		update: []string{fmt.Sprintf("%[1]s = CASE WHEN s.%[1]s = '' THEN c.%[1]s ELSE s.%[1]s END", column)}}
}

var stagedFields = []stagedField{
	textField(contactfile.TargetFirstName, "first_name", func(c contactfile.Contact) string { return c.FirstName }),
	textField(contactfile.TargetLastName, "last_name", func(c contactfile.Contact) string { return c.LastName }),
	textField(contactfile.TargetCompany, "company", func(c contactfile.Contact) string { return c.Company }),
	textField(contactfile.TargetPhone, "phone", func(c contactfile.Contact) string { return c.Phone }),
	{
		// NULL when the row has no custom cell; custom fields merge key by key.
		target:  contactfile.TargetCustom,
		columns: []string{"custom_fields jsonb"},
		encode: func(b []byte, c contactfile.Contact, _ time.Time) []byte {
			if len(c.Custom) == 0 {
				return copyNull(b)
			}
			doc, _ := json.Marshal(c.Custom) // a map of strings always encodes
			return copyJSONB(b, doc)
		},
		insert: [][2]string{{"custom_fields", "coalesce(s.custom_fields, '{}')"}},
		update: []string{"custom_fields = c.custom_fields || coalesce(s.custom_fields, '{}')"},
	},
	{
		// NULL when the row does not say: a new contact takes subscribed_default ($2), an existing one keeps
		// its subscription (a blank cell never resubscribes anyone).
		target:  contactfile.TargetSubscribed,
		columns: []string{"subscribed boolean"},
		encode: func(b []byte, c contactfile.Contact, _ time.Time) []byte {
			if c.Subscribed == nil {
				return copyNull(b)
			}
			return copyBool(b, *c.Subscribed)
		},
		insert: [][2]string{{"subscribed", "coalesce(s.subscribed, $2)"}},
		update: []string{"subscribed = coalesce(s.subscribed, c.subscribed)"},
	},
	{
		// Lowercased category names, linked after the contacts are written.
		target:  contactfile.TargetCategories,
		columns: []string{"categories text[]"},
		encode: func(b []byte, c contactfile.Contact, _ time.Time) []byte {
			if len(c.Categories) == 0 {
				return copyNull(b)
			}
			return copyTextArray(b, c.Categories)
		},
	},
	{
		// verification_status is NULL when the row carries no recognised verdict; a recognised one is stored as
		// imported (the background check leaves it alone) and replaces what an existing contact had.
		target: contactfile.TargetVerificationStatus,
		columns: []string{"verification_status text", "verification_sub_status text", "verification_provider text",
			"verification_checked_at timestamptz"},
		encode: func(b []byte, c contactfile.Contact, at time.Time) []byte {
			if !c.Verified {
				return copyNull(copyNull(copyNull(copyNull(b))))
			}
			return copyTime(copyText(copyText(copyText(b, string(c.Verdict.Status)), c.Verdict.SubStatus), c.Provider), at)
		},
		insert: [][2]string{
			{"verification_status", "coalesce(s.verification_status, 'unknown')"},
			{"verification_sub_status", "coalesce(s.verification_sub_status, '')"},
			{"verification_source", "CASE WHEN s.verification_status IS NULL THEN '' ELSE 'imported' END"},
			{"verification_provider", "coalesce(s.verification_provider, '')"},
			{"verification_checked_at", "s.verification_checked_at"},
			{"is_catch_all", "coalesce(s.verification_sub_status = 'catch_all', false)"},
		},
		update: []string{
			"verification_status = coalesce(s.verification_status, c.verification_status)",
			"verification_sub_status = CASE WHEN s.verification_status IS NULL THEN c.verification_sub_status ELSE s.verification_sub_status END",
			"verification_source = CASE WHEN s.verification_status IS NULL THEN c.verification_source ELSE 'imported' END",
			"verification_provider = CASE WHEN s.verification_status IS NULL THEN c.verification_provider ELSE s.verification_provider END",
			"verification_checked_at = CASE WHEN s.verification_status IS NULL THEN c.verification_checked_at ELSE s.verification_checked_at END",
			"verification_reason = CASE WHEN s.verification_status IS NULL THEN c.verification_reason ELSE '' END",
			"verification_confidence = CASE WHEN s.verification_status IS NULL THEN c.verification_confidence ELSE 0 END",
			"is_catch_all = CASE WHEN s.verification_status IS NULL THEN c.is_catch_all ELSE s.verification_sub_status = 'catch_all' END",
		},
	},
}

// importPlan is the SQL of one import, built from its mapping out of the constant pieces above: a temporary
// staging table (contact_import_rows, dropped with the transaction) with id, created_at and email plus the
// mapped fields, and the statements that write contacts from it.
type importPlan struct {
	fields []stagedField
	// columns are the staging columns in COPY order.
	columns []string
}

func newImportPlan(columns []contactfile.Column) importPlan {
	mapped := map[contactfile.Target]bool{}
	for _, c := range columns {
		mapped[c.Target] = true
	}
	p := importPlan{columns: []string{"id", "created_at", "email"}}
	for _, f := range stagedFields {
		if mapped[f.target] {
			p.fields = append(p.fields, f)
			for _, c := range f.columns {
				p.columns = append(p.columns, strings.Fields(c)[0])
			}
		}
	}
	return p
}

func (p importPlan) staged(t contactfile.Target) bool {
	return slices.ContainsFunc(p.fields, func(f stagedField) bool { return f.target == t })
}

// importWorkMem lets an import's statements hold its rows in memory: the counters' trigger keeps the
// insert's new rows in a transition table, which at the default work_mem spills 50,000 of them to a
// temporary file. It ends with the transaction.
const importWorkMem = "SET LOCAL work_mem = '32MB'"

// copySQL loads the staging table from a binary COPY stream.
func (p importPlan) copySQL() string {
	return "COPY contact_import_rows (" + strings.Join(p.columns, ", ") + ") FROM STDIN (FORMAT binary)"
}

// createSQL creates the staging table.
func (p importPlan) createSQL() string {
	defs := []string{"id uuid NOT NULL", "created_at timestamptz NOT NULL", "email text NOT NULL"}
	for _, f := range p.fields {
		defs = append(defs, f.columns...)
	}
	return "CREATE TEMP TABLE contact_import_rows (" + strings.Join(defs, ", ") + ") ON COMMIT DROP"
}

// insertSQL writes the staged rows as new contacts ($1 organization, $2 subscribed_default), search_ready
// false so they skip the search indexes until the index job runs. dupSeq is a row's duplicate_seq: 0, or
// importDuplicateSeq when dedup is create_duplicate. With skipTaken, a row whose address is taken (an
// existing contact with dedup skip or update, or one another writer committed meanwhile) is left out;
// without, it fails the statement.
func (p importPlan) insertSQL(dupSeq string, skipTaken bool) string {
	cols := []string{"organization_id", "id", "email", "duplicate_seq", "source", "search_ready", "created_at", "updated_at"}
	exprs := []string{"$1", "s.id", "s.email", dupSeq, "'import'", "false", "s.created_at", "s.created_at"}
	if !p.staged(contactfile.TargetSubscribed) {
		cols, exprs = append(cols, "subscribed"), append(exprs, "$2::boolean")
	}
	for _, f := range p.fields {
		for _, ins := range f.insert {
			cols, exprs = append(cols, ins[0]), append(exprs, ins[1])
		}
	}
	q := "INSERT INTO contacts (" + strings.Join(cols, ", ") + ")\nSELECT " + strings.Join(exprs, ", ") + "\nFROM contact_import_rows s"
	if skipTaken {
		q += "\nON CONFLICT (organization_id, email, duplicate_seq) DO NOTHING"
	}
	return q
}

// updateSQL enriches the organization's primary contacts of the staged addresses ($1 organization) with the
// mapped fields; the rows leave the search indexes until the index job puts them back, each recorded in
// contact_index_pending as a range of its own id (the statement's row count is the updated contacts').
func (p importPlan) updateSQL() string {
	sets := []string{"search_ready = false", "updated_at = now()"}
	for _, f := range p.fields {
		sets = append(sets, f.update...)
	}
	return "WITH u AS (UPDATE contacts c SET " + strings.Join(sets, ", ") +
		"\nFROM contact_import_rows s\nWHERE c.organization_id = $1 AND c.email = s.email AND c.duplicate_seq = 0\nRETURNING c.id)" +
		"\nINSERT INTO contact_index_pending (organization_id, lo, hi) SELECT $1, id, id FROM u"
}

// importDuplicateSeq gives an address the organization already has a new duplicate_seq.
const importDuplicateSeq = `CASE WHEN EXISTS (SELECT 1 FROM contacts c
  WHERE c.organization_id = $1 AND c.email = s.email AND c.duplicate_seq = 0) THEN nextval('contact_duplicate_seq') ELSE 0 END`

// importTargetsSQL holds the contacts the links apply to: every staged row's contact, whether imported,
// updated or skipped because the address exists, with the category names the row brought.
const importTargetsSQL = `CREATE TEMP TABLE contact_import_targets (contact_id uuid NOT NULL, categories text[]) ON COMMIT DROP`

// importTargetsFillSQL fills it ($1 organization); the first %s is the categories (NULL when the mapping has
// no categories column), the second joins a staged row to its contact (importTargetByAddress or ByID).
const importTargetsFillSQL = `INSERT INTO contact_import_targets (contact_id, categories)
SELECT c.id, %s FROM contact_import_rows s JOIN contacts c ON c.organization_id = $1 AND %s`

const (
	importTargetByAddress = `c.email = s.email AND c.duplicate_seq = 0`
	importTargetByID      = `c.id = s.id`
)

// The link statements ($1 organization, $2 the ids to link every target to).
const (
	importCategoryLinksSQL = `INSERT INTO contact_categories (organization_id, contact_id, category_id)
SELECT $1, t.contact_id, x.id FROM contact_import_targets t CROSS JOIN unnest($2::uuid[]) AS x(id)
ON CONFLICT DO NOTHING`
	// importNamedCategoryLinksSQL links each target to the categories its row names ($2 lowercased names,
	// $3 their category ids).
	importNamedCategoryLinksSQL = `INSERT INTO contact_categories (organization_id, contact_id, category_id)
SELECT $1, t.contact_id, m.id
FROM contact_import_targets t
CROSS JOIN LATERAL unnest(t.categories) AS n(key)
JOIN unnest($2::text[], $3::uuid[]) AS m(key, id) ON m.key = n.key
ON CONFLICT DO NOTHING`
	importCampaignLinksSQL = `INSERT INTO campaign_leads (organization_id, campaign_id, contact_id)
SELECT $1, x.id, t.contact_id FROM contact_import_targets t CROSS JOIN unnest($2::uuid[]) AS x(id)
ON CONFLICT DO NOTHING`
	// importSegmentPinsSQL pins every target into the segments as a manual include (an exclude pin turns
	// into an include); every target counts as pinned.
	importSegmentPinsSQL = `INSERT INTO segment_pins (organization_id, segment_id, contact_id, include)
SELECT $1, x.id, t.contact_id, true FROM contact_import_targets t CROSS JOIN unnest($2::uuid[]) AS x(id)
ON CONFLICT (organization_id, segment_id, contact_id) DO UPDATE SET include = true`
)

// loadResult is what the set-based writes did.
type loadResult struct {
	imported, updated int
	// skipped counts staged rows written neither way: addresses the organization had (dedup skip) or that
	// another writer added during the import.
	skipped int
	pinned  int
	// notes are about the whole import (line 0).
	notes []string
}

// load writes the staged rows and their links.
func (h *ContactImport) load(ctx context.Context, tx pgx.Tx, org uuid.UUID, opts importOptions, src *importSource) (loadResult, error) {
	var out loadResult
	if src.staged > 0 {
		var err error
		if out.imported, out.updated, err = h.writeContacts(ctx, tx, org, opts, src.plan); err != nil {
			return out, err
		}
		if out.imported > 0 {
			if err := h.queries.ContactImportPendingRange(ctx, tx, dbq.ContactImportPendingRangeParams{OrganizationID: org, Lo: src.lo, Hi: src.hi}); err != nil {
				return out, err
			}
		}
		out.skipped = src.staged - out.imported - out.updated
		if out.skipped > 0 {
			if opts.dedup == dedupSkip {
				out.notes = append(out.notes, fmt.Sprintf("%d addresses were already contacts and were left unchanged (dedup skip).", out.skipped))
			} else {
				out.notes = append(out.notes, fmt.Sprintf("%d addresses were added by another writer during the import and were skipped.", out.skipped))
			}
		}
	}
	report := src.im.Report()
	named := len(report.Categories) > 0
	if src.staged == 0 || !named && len(opts.categoryIDs)+len(opts.campaignIDs)+len(opts.segmentIDs) == 0 {
		return out, nil
	}
	join := importTargetByAddress
	if opts.dedup == dedupCreateDuplicate {
		join = importTargetByID
	}
	if _, err := tx.Exec(ctx, importTargetsSQL); err != nil {
		return out, fmt.Errorf("create import targets: %w", err)
	}
	categories := "NULL"
	if src.plan.staged(contactfile.TargetCategories) {
		categories = "s.categories"
	}
	if _, err := tx.Exec(ctx, fmt.Sprintf(importTargetsFillSQL, categories, join), org); err != nil {
		return out, fmt.Errorf("collect import targets: %w", err)
	}
	if named {
		keys, ids, notes, err := h.fileCategories(ctx, tx, org, report.Categories)
		if err != nil {
			return out, err
		}
		out.notes = append(out.notes, notes...)
		if _, err := tx.Exec(ctx, importNamedCategoryLinksSQL, org, keys, ids); err != nil {
			return out, fmt.Errorf("link named categories: %w", err)
		}
	}
	for _, l := range []struct {
		sql  string
		ids  []uuid.UUID
		what string
	}{
		{importCategoryLinksSQL, opts.categoryIDs, "categories"},
		{importCampaignLinksSQL, opts.campaignIDs, "campaigns"},
		{importSegmentPinsSQL, opts.segmentIDs, "segments"},
	} {
		if len(l.ids) == 0 {
			continue
		}
		tag, err := tx.Exec(ctx, l.sql, org, l.ids)
		if err != nil {
			return out, fmt.Errorf("link %s: %w", l.what, err)
		}
		if l.what == "segments" {
			out.pinned = int(tag.RowsAffected())
		}
	}
	return out, nil
}

// writeContacts writes the staged rows as the dedup mode says and returns how many contacts it created and
// updated; the other staged rows were skipped.
func (h *ContactImport) writeContacts(ctx context.Context, tx pgx.Tx, org uuid.UUID, opts importOptions, plan importPlan) (imported, updated int, err error) {
	empty, err := h.queries.ContactImportOrgEmpty(ctx, tx, org)
	if err != nil {
		return 0, 0, err
	}
	if empty {
		// No address of the file can exist yet, so the rows go in without a conflict check per row (about a
		// sixth of the insert's cost), in a savepoint: should another writer commit one of the addresses
		// meanwhile, the insert fails on the unique index and the checked path below runs instead.
		sp, err := tx.Begin(ctx)
		if err != nil {
			return 0, 0, err
		}
		tag, err := sp.Exec(ctx, plan.insertSQL("0", false), org, opts.subscribedDefault)
		if err == nil {
			return int(tag.RowsAffected()), 0, sp.Commit(ctx)
		}
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return 0, 0, rbErr
		}
		if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != "23505" { // unique_violation
			return 0, 0, fmt.Errorf("insert imported contacts: %w", err)
		}
	}
	dupSeq := "0"
	if opts.dedup == dedupCreateDuplicate {
		dupSeq = importDuplicateSeq
	}
	if opts.dedup == dedupUpdate {
		tag, err := tx.Exec(ctx, plan.updateSQL(), org)
		if err != nil {
			return 0, 0, fmt.Errorf("update imported contacts: %w", err)
		}
		updated = int(tag.RowsAffected())
	}
	tag, err := tx.Exec(ctx, plan.insertSQL(dupSeq, true), org, opts.subscribedDefault)
	if err != nil {
		return 0, 0, fmt.Errorf("insert imported contacts: %w", err)
	}
	return int(tag.RowsAffected()), updated, nil
}

// fileCategories resolves the category names a file uses to the organization's categories (matched
// case-insensitively), creating the missing ones (at most maxNewCategories, in file order). It returns the
// lowercased names with their ids, and notes naming what was created or left out.
func (h *ContactImport) fileCategories(ctx context.Context, tx pgx.Tx, org uuid.UUID, names []string) ([]string, []uuid.UUID, []string, error) {
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = strings.ToLower(n)
	}
	existing, err := h.queries.ContactImportCategoriesByKey(ctx, tx, dbq.ContactImportCategoriesByKeyParams{OrganizationID: org, Keys: keys})
	if err != nil {
		return nil, nil, nil, err
	}
	ids := map[string]uuid.UUID{}
	for _, r := range existing {
		ids[r.Key] = r.ID
	}
	var create dbq.ContactImportCategoriesCreateParams
	var created, left []string // names, for the notes
	for i, k := range keys {
		if _, ok := ids[k]; ok {
			continue
		}
		if len(create.Ids) == maxNewCategories {
			left = append(left, names[i])
			continue
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, nil, nil, err
		}
		create.Ids = append(create.Ids, id)
		create.Titles = append(create.Titles, names[i])
		create.Offsets = append(create.Offsets, int32(len(create.Offsets)))
		created = append(created, names[i])
	}
	var notes []string
	if len(create.Ids) > 0 {
		create.OrganizationID = org
		rows, err := h.queries.ContactImportCategoriesCreate(ctx, tx, create)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, r := range rows {
			ids[r.Key] = r.ID
		}
		notes = append(notes, "New categories created: "+nameList(created)+".")
	}
	if len(left) > 0 {
		notes = append(notes, fmt.Sprintf("Categories not created (an import creates at most %d): %s.", maxNewCategories, nameList(left)))
	}
	outKeys := make([]string, 0, len(ids))
	outIDs := make([]uuid.UUID, 0, len(ids))
	for k, id := range ids {
		outKeys = append(outKeys, k)
		outIDs = append(outIDs, id)
	}
	return outKeys, outIDs, notes, nil
}

// nameList lists names for a note, at most maxNamesInNote of them.
func nameList(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i == maxNamesInNote {
			fmt.Fprintf(&b, " and %d more", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	return b.String()
}
