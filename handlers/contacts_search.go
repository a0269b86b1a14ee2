package handlers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/leadgate"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
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
	cursor := params.Cursor
	if cursor.Value == "" {
		cursor.Reset() // an empty cursor asks for the first page
	}
	var campaign *uuid.UUID
	if id, ok := f.OneCampaign(); ok {
		campaign = &id
	}
	out := &api.ContactList{}
	// The page, its total and lead counts share one set of trigram lookups (contacts.Resolve), made in their
	// transaction.
	var resolved contacts.Filter
	page, err := keysetPageThen(ctx, h.pool, h.cursors, org, f.SortOrder(), cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *contacts.Position, rowLimit int32) ([]contacts.Row, error) {
			var err error
			if resolved, err = contacts.Resolve(ctx, tx, f); err != nil {
				return nil, err
			}
			return contacts.Search(ctx, tx, org, resolved, after, int(rowLimit))
		},
		func(r contacts.Row) contacts.Position { return contacts.PositionOf(f.Sort, r) },
		func(ctx context.Context, tx pgx.Tx, rows []contacts.Row, first bool) error {
			var err error
			if out.Data, err = contactViews(ctx, tx, org, rows, campaign); err != nil {
				return err
			}
			if !first {
				return nil
			}
			total, err := contacts.Count(ctx, tx, org, resolved)
			if err != nil {
				return err
			}
			out.Pagination.Total.SetTo(total)
			counts, err := h.contactCounts(ctx, tx, org)
			if err != nil {
				return err
			}
			out.Counts = api.NewOptContactCounts(counts)
			if campaign != nil {
				lc, err := leadCounts(ctx, tx, org, resolved, *campaign)
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
	out.Pagination.HasMore, out.Pagination.NextCursor = page.HasMore, optNilStringPtr(page.NextCursor)
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
func (h *Contacts) contactCounts(ctx context.Context, tx pgx.Tx, org uuid.UUID) (api.ContactCounts, error) {
	var c api.ContactCounts
	stats, err := h.queries.ContactStats(ctx, tx, org)
	if err != nil {
		return c, fmt.Errorf("contact counts: %w", err)
	}
	c.Total, c.Subscribed, c.Unsubscribed = int(stats.Total), int(stats.Subscribed), int(stats.Total-stats.Subscribed)
	c.InCampaign, c.NotContacted = int(stats.InCampaign), int(stats.NotContacted)
	categories, err := h.queries.ContactStatsCategories(ctx, tx, org)
	if err != nil {
		return c, fmt.Errorf("category counts: %w", err)
	}
	c.Categories = make([]api.ContactCategoryCount, len(categories))
	for i, k := range categories {
		c.Categories[i] = api.ContactCategoryCount{CategoryID: k.ID, Count: int(k.ContactCount)}
	}
	return c, nil
}

// leadCounts counts the named campaign's leads among the contacts the search's other filters select
// (lead_status and engagement left out, so the counts show every state the filter could pick).
func leadCounts(ctx context.Context, tx pgx.Tx, org uuid.UUID, f contacts.Filter, campaign uuid.UUID) (api.ContactLeadCounts, error) {
	g := f
	g.LeadStatus, g.Engagement = "", ""
	n, err := contacts.CountLeads(ctx, tx, org, g, campaign)
	if err != nil {
		return api.ContactLeadCounts{}, err
	}
	return api.ContactLeadCounts{Total: n.Total, Queued: n.Queued, Processing: n.Processing, Completed: n.Completed,
		Replied: n.Replied, Bounced: n.Bounced, Failed: n.Failed, Paused: n.Paused, Undeliverable: n.Undeliverable,
		Unsubscribed: n.Unsubscribed, Contacted: n.Contacted, Opened: n.Opened, Clicked: n.Clicked, RepliedAny: n.RepliedAny}, nil
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
//
// An agent's new leads for campaigns that send outside its policy wait for a person: 202 with the approval,
// every other change made.
func (h *Contacts) ContactsBulkUpdate(ctx context.Context, req *api.ContactBulkUpdateRequest, _ api.ContactsBulkUpdateParams) (api.ContactsBulkUpdateRes, error) {
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
	op, err := newBulkOperation(h.outbox, h.pool, org, events.BulkContactsUpdate)
	if err != nil {
		return nil, err
	}
	out := []api.Contact{}
	var held *leadgate.Held
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
		p := auth.PrincipalFrom(ctx)
		watch, err := h.gate.Watch(ctx, tx, p, ids)
		if err != nil {
			return err
		}
		for _, op := range req.Fields {
			field := dbq.ContactFieldEditParams{OrganizationID: org, Ids: ids, Key: op.Key, Value: op.Value.Value}
			switch string(op.Type) {
			case fieldAdd:
				err = h.queries.ContactFieldAdd(ctx, tx, dbq.ContactFieldAddParams(field))
			case fieldEdit:
				err = h.queries.ContactFieldEdit(ctx, tx, field)
			case fieldDelete:
				err = h.queries.ContactFieldDelete(ctx, tx, dbq.ContactFieldDeleteParams{OrganizationID: org, Ids: ids, Key: op.Key})
			default: // RENAME
				err = h.queries.ContactFieldRename(ctx, tx, dbq.ContactFieldRenameParams(field))
			}
			if err != nil {
				return fmt.Errorf("bulk field %s: %w", op.Type, err)
			}
		}
		if v, ok := req.Subscribe.Get(); ok {
			if err := h.queries.ContactSubscribeMany(ctx, tx, dbq.ContactSubscribeManyParams{OrganizationID: org, Ids: ids, Subscribed: v}); err != nil {
				return fmt.Errorf("bulk subscribe: %w", err)
			}
		}
		if err := unlinkContacts(ctx, tx, org, ids, removeCamps, removeCats); err != nil {
			return err
		}
		if err := linkCategories(ctx, tx, org, ids, addCats); err != nil {
			return err
		}
		if len(addCamps)+len(removeCamps)+len(addCats)+len(removeCats) > 0 {
			if err := h.queries.ContactTouch(ctx, tx, dbq.ContactTouchParams{OrganizationID: org, Ids: ids}); err != nil {
				return err
			}
		}
		// The campaigns go through the gate last, with what the rest of the change brings into linked segments.
		added, err := h.gate.Add(ctx, tx, p, leadgate.Request{Leads: leadsOf(ids, addCamps), Changed: ids, Watch: watch,
			Event: "contacts.bulk_updated"}, time.Now())
		if err != nil {
			return err
		}
		held = added.Held
		if _, err := h.outbox.Emit(ctx, tx, events.ContactUpdated, bulkEventData(len(ids))); err != nil {
			return err
		}
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "contacts.bulk_updated", EntityType: audit.EntityContact,
			Metadata: map[string]any{"count": len(ids), "all": sel.All, "add_campaigns": len(addCamps), "remove_campaigns": len(removeCamps),
				"add_categories": len(addCats), "remove_categories": len(removeCats), "field_ops": len(req.Fields), "subscribe": req.Subscribe.Set}}); err != nil {
			return err
		}
		if err := op.done(ctx, tx, int64(len(ids)), int64(len(ids)), 0); err != nil {
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
		return nil, op.failed(ctx, err)
	}
	if held != nil {
		return &api.ContactsHeld{Contacts: out, Approval: heldLeads(held)}, nil
	}
	res := api.ContactsBulkUpdateOKApplicationJSON(out)
	return &res, nil
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
	op, err := newBulkOperation(h.outbox, h.pool, org, events.BulkContactsDelete)
	if err != nil {
		return err
	}
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		ids, err := sel.IDs(ctx, tx, org)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return op.done(ctx, tx, 0, 0, 0)
		}
		deleted, err := h.queries.ContactDeleteMany(ctx, tx, dbq.ContactDeleteManyParams{OrganizationID: org, Ids: ids})
		if err != nil {
			return fmt.Errorf("bulk delete contacts: %w", err)
		}
		n := int(deleted)
		if _, err := h.outbox.Emit(ctx, tx, events.ContactDeleted, bulkEventData(n)); err != nil {
			return err
		}
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "contacts.deleted", EntityType: audit.EntityContact,
			Metadata: map[string]any{"count": n, "all": sel.All}}); err != nil {
			return err
		}
		return op.done(ctx, tx, int64(len(ids)), int64(n), 0)
	})
	if err != nil {
		return op.failed(ctx, err)
	}
	return nil
}
