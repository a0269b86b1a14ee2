package contactimport

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contactfile"
)

// Limits of what one import creates.
const (
	// maxNewCategories is how many categories one import creates from a categories column; names beyond are
	// reported and not linked.
	maxNewCategories = 100
	// maxNamesInNote caps the names a whole-import note lists.
	maxNamesInNote = 20
)

// Result is what the set-based writes did.
type Result struct {
	// Imported and Updated count the contacts created and enriched.
	Imported, Updated int
	// Skipped counts staged rows written neither way: addresses the organization had (dedup skip) or that
	// another writer added during the import.
	Skipped int
	// Pinned counts the segment pins written (segment_ids).
	Pinned int
	// Targets are the contacts the links apply to (every staged row's), when Defer took some links out or
	// Watch was asked; nil otherwise.
	Targets []uuid.UUID
	// Notes are about the whole import (line 0).
	Notes []string
	// Analyzed reports that the import analyzed the organization column from a small sample (see load); the
	// caller asks the index job to analyze in full (contacts.IndexArgs.Analyze).
	Analyzed bool
}

// load writes the staged rows and their links.
func (im *Import) load(ctx context.Context, tx pgx.Tx, org uuid.UUID) (Result, error) {
	opts, src := im.opts, im.src
	var out Result
	if im.watch != nil {
		var existing []uuid.UUID
		if src.staged > 0 && opts.Dedup != dedupCreateDuplicate {
			rows, err := tx.Query(ctx, importExistingSQL, org)
			if err != nil {
				return out, fmt.Errorf("read imported addresses' contacts: %w", err)
			}
			if existing, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID]); err != nil {
				return out, fmt.Errorf("read imported addresses' contacts: %w", err)
			}
		}
		if err := im.watch(ctx, existing); err != nil {
			return out, err
		}
	}
	if src.staged > 0 {
		var err error
		if out.Imported, out.Updated, err = im.writeContacts(ctx, tx, org, src.plan); err != nil {
			return out, err
		}
		if out.Imported > 0 {
			if err := im.queries.ContactImportPendingRange(ctx, tx, dbq.ContactImportPendingRangeParams{OrganizationID: org, Lo: src.lo, Hi: src.hi}); err != nil {
				return out, err
			}
			// Searches in the seconds before the index job has run plan with the organization's size: when the
			// planner takes it for a tenth of what it now has or less (its first large import), the
			// organization column is analyzed here from a small sample (contacts_import_settle).
			var err error
			if out.Analyzed, err = im.queries.ContactImportSettle(ctx, tx); err != nil {
				return out, fmt.Errorf("settle import statistics: %w", err)
			}
		}
		out.Skipped = src.staged - out.Imported - out.Updated
		if out.Skipped > 0 {
			if opts.Dedup == dedupSkip {
				out.Notes = append(out.Notes, fmt.Sprintf("%d addresses were already contacts and were left unchanged (dedup skip).", out.Skipped))
			} else {
				out.Notes = append(out.Notes, fmt.Sprintf("%d addresses were added by another writer during the import and were skipped.", out.Skipped))
			}
		}
	}
	report := src.im.Report()
	named := len(report.Categories) > 0
	targets := im.deferred || im.watch != nil
	if src.staged == 0 || !named && !targets && len(opts.CategoryIDs)+len(opts.CampaignIDs)+len(opts.SegmentIDs) == 0 {
		return out, nil
	}
	join := importTargetByAddress
	if opts.Dedup == dedupCreateDuplicate {
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
		keys, ids, notes, err := im.fileCategories(ctx, tx, org, report.Categories)
		if err != nil {
			return out, err
		}
		out.Notes = append(out.Notes, notes...)
		if _, err := tx.Exec(ctx, importNamedCategoryLinksSQL, org, keys, ids); err != nil {
			return out, fmt.Errorf("link named categories: %w", err)
		}
	}
	for _, l := range []struct {
		sql  string
		ids  []uuid.UUID
		what string
	}{
		{importCategoryLinksSQL, opts.CategoryIDs, "categories"},
		{importCampaignLinksSQL, opts.CampaignIDs, "campaigns"},
		{importSegmentPinsSQL, opts.SegmentIDs, "segments"},
	} {
		if len(l.ids) == 0 {
			continue
		}
		tag, err := tx.Exec(ctx, l.sql, org, l.ids)
		if err != nil {
			return out, fmt.Errorf("link %s: %w", l.what, err)
		}
		if l.what == "segments" {
			out.Pinned = int(tag.RowsAffected())
		}
	}
	if targets {
		rows, err := tx.Query(ctx, importTargetIDsSQL)
		if err != nil {
			return out, fmt.Errorf("read import targets: %w", err)
		}
		if out.Targets, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID]); err != nil {
			return out, fmt.Errorf("read import targets: %w", err)
		}
	}
	return out, nil
}

// writeContacts writes the staged rows as the dedup mode says and returns how many contacts it created and
// updated; the other staged rows were skipped.
func (im *Import) writeContacts(ctx context.Context, tx pgx.Tx, org uuid.UUID, p plan) (imported, updated int, err error) {
	opts := im.opts
	empty, err := im.queries.ContactImportOrgEmpty(ctx, tx, org)
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
		tag, err := sp.Exec(ctx, p.insertSQL("0", false), org, opts.SubscribedDefault)
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
	if opts.Dedup == dedupCreateDuplicate {
		dupSeq = importDuplicateSeq
	}
	if opts.Dedup == dedupUpdate {
		tag, err := tx.Exec(ctx, p.updateSQL(), org)
		if err != nil {
			return 0, 0, fmt.Errorf("update imported contacts: %w", err)
		}
		updated = int(tag.RowsAffected())
	}
	tag, err := tx.Exec(ctx, p.insertSQL(dupSeq, true), org, opts.SubscribedDefault)
	if err != nil {
		return 0, 0, fmt.Errorf("insert imported contacts: %w", err)
	}
	return int(tag.RowsAffected()), updated, nil
}

// fileCategories resolves the category names a file uses to the organization's categories (matched
// case-insensitively), creating the missing ones (at most maxNewCategories, in file order). It returns the
// lowercased names with their ids, and notes naming what was created or left out.
func (im *Import) fileCategories(ctx context.Context, tx pgx.Tx, org uuid.UUID, names []string) ([]string, []uuid.UUID, []string, error) {
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = strings.ToLower(n)
	}
	existing, err := im.queries.ContactImportCategoriesByKey(ctx, tx, dbq.ContactImportCategoriesByKeyParams{OrganizationID: org, Keys: keys})
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
		rows, err := im.queries.ContactImportCategoriesCreate(ctx, tx, create)
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
