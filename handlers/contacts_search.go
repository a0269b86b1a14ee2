package handlers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/truncate"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Page sizes of the contact search.
const (
	defaultContactPage = 50
	maxContactPage     = 500
)

// ContactsSearch pages through the contacts matching the body's filters in its sort order. The first page also
// carries the filtered total, the org-wide counts and, when exactly one campaign is named, its lead counts.
func (h *Contacts) ContactsSearch(ctx context.Context, req api.OptContactSearchRequest, params api.ContactsSearchParams) (*api.ContactList, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	f, err := contacts.ParseSearch(searchInput(req.Value))
	if err != nil {
		return nil, err
	}
	if id, ok := params.Category.Get(); ok && !containsID(f.CategoryIDs, id) {
		f.CategoryIDs = append(f.CategoryIDs, id)
	}
	limit := defaultContactPage
	if v, ok := params.Limit.Get(); ok && strings.TrimSpace(v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > maxContactPage {
			return nil, apierror.BadRequest("invalid_limit", fmt.Sprintf("limit must be a number between 1 and %d.", maxContactPage))
		}
		limit = n
	}
	var after *contacts.Position
	if cur, ok := params.Cursor.Get(); ok && cur != "" {
		var pos contacts.Position
		if err := h.cursors.Decode(cur, f.SortOrder(), &pos); err != nil {
			return nil, err
		}
		after = &pos
	}
	out := &api.ContactList{}
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := contacts.Search(ctx, tx, org, f, after, limit+1)
		if err != nil {
			return err
		}
		hasMore := len(rows) > limit
		if hasMore {
			rows = rows[:limit]
		}
		var campaign *uuid.UUID
		if id, ok := f.OneCampaign(); ok {
			campaign = &id
		}
		if out.Data, err = contactViews(ctx, tx, org, rows, campaign); err != nil {
			return err
		}
		out.Pagination.HasMore = hasMore
		out.Pagination.NextCursor.SetToNull()
		if hasMore {
			cur, err := h.cursors.Encode(f.SortOrder(), contacts.PositionOf(f.Sort, rows[len(rows)-1]))
			if err != nil {
				return err
			}
			out.Pagination.NextCursor.SetTo(cur)
		}
		if after != nil {
			return nil
		}
		total, err := contacts.Count(ctx, tx, org, f)
		if err != nil {
			return err
		}
		out.Pagination.Total.SetTo(total)
		counts, err := contactCounts(ctx, tx, org)
		if err != nil {
			return err
		}
		out.Counts = api.NewOptContactCounts(counts)
		if campaign != nil {
			lc, err := leadCounts(ctx, tx, org, f, *campaign)
			if err != nil {
				return err
			}
			out.LeadCounts = api.NewOptContactLeadCounts(lc)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func containsID(ids []uuid.UUID, id uuid.UUID) bool {
	for _, v := range ids {
		if v == id {
			return true
		}
	}
	return false
}

// contactCounts reads the org-wide counts the triggers keep (no scan of the contacts).
func contactCounts(ctx context.Context, tx pgx.Tx, org uuid.UUID) (api.ContactCounts, error) {
	var c api.ContactCounts
	var total, subscribed, inCampaign, notContacted int64
	err := tx.QueryRow(ctx, `SELECT coalesce(max(total), 0), coalesce(max(subscribed), 0), coalesce(max(in_campaign), 0),
		coalesce(max(not_contacted), 0) FROM contact_stats WHERE organization_id = $1`, org).Scan(&total, &subscribed, &inCampaign, &notContacted)
	if err != nil {
		return c, fmt.Errorf("contact counts: %w", err)
	}
	c.Total, c.Subscribed, c.Unsubscribed = int(total), int(subscribed), int(total-subscribed)
	c.InCampaign, c.NotContacted = int(inCampaign), int(notContacted)
	rows, err := tx.Query(ctx, `SELECT id, contact_count FROM labels WHERE organization_id = $1 AND kind = 'category' ORDER BY position, id`, org)
	if err != nil {
		return c, fmt.Errorf("category counts: %w", err)
	}
	defer rows.Close()
	c.Categories = []api.ContactCategoryCount{}
	for rows.Next() {
		var id uuid.UUID
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return c, err
		}
		c.Categories = append(c.Categories, api.ContactCategoryCount{CategoryID: id, Count: int(n)})
	}
	return c, rows.Err()
}

// leadCounts counts the named campaign's leads among the contacts the search's other filters select
// (lead_status and engagement left out, so the counts show every state the filter could pick).
func leadCounts(ctx context.Context, tx pgx.Tx, org uuid.UUID, f contacts.Filter, campaign uuid.UUID) (api.ContactLeadCounts, error) {
	g := f
	g.LeadStatus, g.Engagement = "", ""
	sql, args, err := contacts.LeadCountsSQL(ctx, tx, org, g, campaign)
	if err != nil {
		return api.ContactLeadCounts{}, err
	}
	var n [14]int64
	if err := tx.QueryRow(ctx, sql, args...).Scan(&n[0], &n[1], &n[2], &n[3], &n[4], &n[5], &n[6], &n[7], &n[8], &n[9],
		&n[10], &n[11], &n[12], &n[13]); err != nil {
		return api.ContactLeadCounts{}, fmt.Errorf("lead counts: %w", err)
	}
	return api.ContactLeadCounts{Total: int(n[0]), Queued: int(n[1]), Processing: int(n[2]), Completed: int(n[3]),
		Replied: int(n[4]), Bounced: int(n[5]), Failed: int(n[6]), Paused: int(n[7]), Undeliverable: int(n[8]),
		Unsubscribed: int(n[9]), Contacted: int(n[10]), Opened: int(n[11]), Clicked: int(n[12]), RepliedAny: int(n[13])}, nil
}

// Bulk field operations.
const (
	fieldAdd    = "ADD"
	fieldEdit   = "EDIT"
	fieldDelete = "DELETE"
	fieldRename = "RENAME"
	maxFieldOps = 50
)

// ContactsBulkUpdate applies one change set to a selection: campaigns and categories added or removed,
// custom-field operations (ADD sets a key where it is missing, EDIT sets it everywhere, DELETE removes it,
// RENAME moves its value to the key named by value) and subscribe. Explicit ids answer the updated contacts;
// a filter selection answers an empty array. One contact.updated event with bulk and count is raised.
func (h *Contacts) ContactsBulkUpdate(ctx context.Context, req *api.ContactBulkUpdateRequest, _ api.ContactsBulkUpdateParams) ([]api.Contact, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	sel, err := contacts.ParseSelection(bulkUpdateSelectionInput(req))
	if err != nil {
		return nil, err
	}
	addCamps, removeCamps := dedupIDs(req.AddCampaigns), dedupIDs(req.RemoveCampaigns)
	addCats, removeCats := dedupIDs(req.AddCategories), dedupIDs(req.RemoveCategories)
	if len(req.Fields) > maxFieldOps {
		return nil, apierror.BadRequest("invalid_fields", fmt.Sprintf("Send at most %d field operations.", maxFieldOps))
	}
	for _, op := range req.Fields {
		if !contacts.ValidCustomKey(op.Key) {
			return nil, apierror.BadRequest("invalid_custom_field", fmt.Sprintf("Custom field name %q may use only letters, digits, underscore, space and dash (1 to %d characters).", truncate.Chars(op.Key, 80), contacts.MaxCustomKeyLen))
		}
		switch string(op.Type) {
		case fieldRename:
			if !contacts.ValidCustomKey(op.Value.Value) {
				return nil, apierror.BadRequest("invalid_custom_field", fmt.Sprintf("RENAME needs value to be the new field name; %q is not a valid name.", truncate.Chars(op.Value.Value, 80)))
			}
		case fieldAdd, fieldEdit:
			if len([]rune(op.Value.Value)) > contacts.MaxCustomValueLen {
				return nil, apierror.BadRequest("invalid_custom_field", fmt.Sprintf("Custom field %q is longer than %d characters.", op.Key, contacts.MaxCustomValueLen))
			}
		}
	}
	changed := len(addCamps)+len(removeCamps)+len(addCats)+len(removeCats)+len(req.Fields) > 0 || req.Subscribe.Set
	if !changed {
		return nil, apierror.BadRequest("no_changes", "Send at least one change: add_campaigns, remove_campaigns, add_categories, remove_categories, fields or subscribe.")
	}
	out := []api.Contact{}
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := checkLinkRefs(ctx, tx, org, append(slices.Clone(addCamps), removeCamps...), append(slices.Clone(addCats), removeCats...), nil); err != nil {
			return err
		}
		ids, err := sel.IDs(ctx, tx, org)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return apierror.BadRequest("empty_selection", "None of the selected contacts exist.")
		}
		for _, op := range req.Fields {
			var sql string
			args := []any{org, ids, op.Key}
			switch string(op.Type) {
			case fieldAdd:
				sql = `UPDATE contacts SET custom_fields = custom_fields || jsonb_build_object($3::text, $4::text), updated_at = now()
					WHERE organization_id = $1 AND id = ANY($2) AND NOT custom_fields ? $3`
				args = append(args, op.Value.Value)
			case fieldEdit:
				sql = `UPDATE contacts SET custom_fields = custom_fields || jsonb_build_object($3::text, $4::text), updated_at = now()
					WHERE organization_id = $1 AND id = ANY($2)`
				args = append(args, op.Value.Value)
			case fieldDelete:
				sql = `UPDATE contacts SET custom_fields = custom_fields - $3::text, updated_at = now()
					WHERE organization_id = $1 AND id = ANY($2) AND custom_fields ? $3`
			default: // RENAME
				sql = `UPDATE contacts SET custom_fields = (custom_fields - $3::text) || jsonb_build_object($4::text, custom_fields->$3),
					updated_at = now() WHERE organization_id = $1 AND id = ANY($2) AND custom_fields ? $3`
				args = append(args, op.Value.Value)
			}
			if _, err := tx.Exec(ctx, sql, args...); err != nil {
				return fmt.Errorf("bulk field %s: %w", op.Type, err)
			}
		}
		if v, ok := req.Subscribe.Get(); ok {
			if _, err := tx.Exec(ctx, `UPDATE contacts SET subscribed = $3, updated_at = now()
				WHERE organization_id = $1 AND id = ANY($2) AND subscribed <> $3`, org, ids, v); err != nil {
				return fmt.Errorf("bulk subscribe: %w", err)
			}
		}
		if err := unlinkContacts(ctx, tx, org, ids, removeCamps, removeCats); err != nil {
			return err
		}
		if err := linkContacts(ctx, tx, org, ids, addCamps, addCats); err != nil {
			return err
		}
		if len(addCamps)+len(removeCamps)+len(addCats)+len(removeCats) > 0 {
			if _, err := tx.Exec(ctx, `UPDATE contacts SET updated_at = now() WHERE organization_id = $1 AND id = ANY($2)`, org, ids); err != nil {
				return err
			}
		}
		if _, err := h.outbox.Emit(ctx, tx, events.ContactUpdated, bulkEventData(len(ids))); err != nil {
			return err
		}
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "contacts.bulk_updated", EntityType: audit.EntityContact,
			Metadata: map[string]any{"count": len(ids), "all": sel.All, "add_campaigns": len(addCamps), "remove_campaigns": len(removeCamps),
				"add_categories": len(addCats), "remove_categories": len(removeCats), "field_ops": len(req.Fields), "subscribe": req.Subscribe.Set}}); err != nil {
			return err
		}
		if sel.All {
			return nil
		}
		rows, err := contacts.ByIDs(ctx, tx, org, ids)
		if err != nil {
			return err
		}
		out, err = contactViews(ctx, tx, org, rows, nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ContactsBulkDelete deletes an id list or a selection in one transaction.
func (h *Contacts) ContactsBulkDelete(ctx context.Context, req api.ContactsBulkDeleteReq, _ api.ContactsBulkDeleteParams) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	var sel contacts.Selection
	switch req.Type {
	case api.UUIDArrayContactsBulkDeleteReq:
		// The schema takes 1 to 1000 ids; the server refuses other counts before this runs.
		sel, err = contacts.ParseSelection(contacts.SelectionInput{Contacts: req.UUIDArray})
	default:
		sel, err = contacts.ParseSelection(selectionInput(req.ContactSelection))
	}
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		ids, err := sel.IDs(ctx, tx, org)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		tag, err := tx.Exec(ctx, `DELETE FROM contacts WHERE organization_id = $1 AND id = ANY($2)`, org, ids)
		if err != nil {
			return fmt.Errorf("bulk delete contacts: %w", err)
		}
		n := int(tag.RowsAffected())
		if _, err := h.outbox.Emit(ctx, tx, events.ContactDeleted, bulkEventData(n)); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "contacts.deleted", EntityType: audit.EntityContact,
			Metadata: map[string]any{"count": n, "all": sel.All}})
	})
}
