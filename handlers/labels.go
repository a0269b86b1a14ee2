package handlers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Labels implements the workspace label registries: campaign folders (/folders), mailbox tags (/tags) and
// contact categories (/categories), each an ordered list of titled, coloured labels.
//
// The three registries share one table and one set of rules, told apart by kind: an id of one kind is
// unknown (404 label_not_found) to the routes of the others. Titles need not be unique. Every write that
// changes a kind's order (create, move, delete) runs serialized per organization and kind, so positions stay
// dense (0..n-1) and the per-kind cap holds under concurrent writers. Permissions are checked by the route
// table: folders need campaign write access, tags mailbox write access, categories contact write access.
type Labels struct {
	pool    *pgxpool.Pool
	queries *dbq.Queries
}

// NewLabels builds the label registry operations.
func NewLabels(pool *pgxpool.Pool) *Labels {
	return &Labels{pool: pool, queries: dbq.New()}
}

// Limits of the label registries.
const (
	maxLabelTitle    = 100
	maxLabelsPerKind = 500
)

// labelKind names one registry: its kind in the labels table and the noun its messages use.
type labelKind struct {
	name, noun string
}

var (
	folderLabels   = labelKind{name: "folder", noun: "Folder"}
	tagLabels      = labelKind{name: "tag", noun: "Tag"}
	categoryLabels = labelKind{name: "category", noun: "Category"}
)

func (k labelKind) notFound() error {
	return apierror.NotFound("label_not_found", k.noun+" not found.")
}

// classify maps a missing row to label_not_found and leaves the rest to db.Classify.
func (k labelKind) classify(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return k.notFound()
	}
	return db.Classify(err, k.noun)
}

var labelColorRe = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// labelTitle trims a title and checks it is 1 to 100 characters without control characters (a title is one
// line in every list that shows it).
func labelTitle(v string) (string, error) {
	v = strings.TrimSpace(v)
	n := utf8.RuneCountInString(v)
	if n == 0 || n > maxLabelTitle || strings.ContainsFunc(v, unicode.IsControl) {
		return "", apierror.BadRequest("invalid_title", fmt.Sprintf("title must be 1 to %d characters on one line.", maxLabelTitle))
	}
	return v, nil
}

// labelColor accepts no colour (empty) or a #rgb / #rrggbb hex colour, trimmed and lowercased; the short
// form is kept as sent rather than expanded.
func labelColor(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	if !labelColorRe.MatchString(v) {
		return "", apierror.BadRequest("invalid_color", "color must be empty or a hex colour such as #3b82f6 or #f80.")
	}
	return strings.ToLower(v), nil
}

func labelOf(l dbq.Label) *api.Label {
	return &api.Label{ID: l.ID, Title: l.Title, Color: l.Color, Position: int(l.Position), CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

// lockKind serializes the order-changing writes of one kind in one organization until the transaction ends.
func (h *Labels) lockKind(ctx context.Context, tx pgx.Tx, org uuid.UUID, k labelKind) error {
	return h.queries.LabelLockKind(ctx, tx, dbq.LabelLockKindParams{OrganizationID: org, Kind: k.name})
}

// create appends a label at the end of its kind's order (position = how many there are); the 501st label of
// a kind is refused with too_many_labels.
func (h *Labels) create(ctx context.Context, k labelKind, req *api.CreateLabel) (*api.Label, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	title, err := labelTitle(req.Title)
	if err != nil {
		return nil, err
	}
	color, err := labelColor(req.Color.Value)
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var out dbq.Label
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := h.lockKind(ctx, tx, org, k); err != nil {
			return err
		}
		n, err := h.queries.LabelCountKind(ctx, tx, dbq.LabelCountKindParams{OrganizationID: org, Kind: k.name})
		if err != nil {
			return err
		}
		if n >= maxLabelsPerKind {
			return apierror.BadRequest("too_many_labels", fmt.Sprintf("An organization can have at most %d %s labels; delete one first.", maxLabelsPerKind, k.name))
		}
		out, err = h.queries.LabelCreate(ctx, tx, dbq.LabelCreateParams{OrganizationID: org, ID: id, Kind: k.name,
			Title: title, Color: color, Position: int32(n)})
		if err != nil {
			return k.classify(err)
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "label.created", EntityType: audit.EntityLabel, EntityID: id.String(),
			Metadata: map[string]any{"kind": k.name, "title": title, "color": color, "position": n}})
	})
	if err != nil {
		return nil, err
	}
	return labelOf(out), nil
}

// update changes the fields sent (title, color; an empty color clears it) and keeps the rest. A body with
// neither field writes nothing and returns the label as it is.
func (h *Labels) update(ctx context.Context, k labelKind, id uuid.UUID, req *api.UpdateLabel) (*api.Label, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	args := dbq.LabelUpdateParams{OrganizationID: org, Kind: k.name, ID: id}
	if v, ok := req.Title.Get(); ok {
		title, err := labelTitle(v)
		if err != nil {
			return nil, err
		}
		args.Title = &title
	}
	if v, ok := req.Color.Get(); ok {
		color, err := labelColor(v)
		if err != nil {
			return nil, err
		}
		args.Color = &color
	}
	var out dbq.Label
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if args.Title == nil && args.Color == nil {
			out, err = h.queries.LabelGet(ctx, tx, dbq.LabelGetParams{OrganizationID: org, Kind: k.name, ID: id})
			return k.classify(err)
		}
		if out, err = h.queries.LabelUpdate(ctx, tx, args); err != nil {
			return k.classify(err)
		}
		meta := map[string]any{"kind": k.name, "title": out.Title}
		if args.Color != nil {
			meta["color"] = out.Color
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "label.updated", EntityType: audit.EntityLabel, EntityID: id.String(), Metadata: meta})
	})
	if err != nil {
		return nil, err
	}
	return labelOf(out), nil
}

// remove deletes a label and closes the gap in its kind's order. Links to it go with it: deleting a
// category unlinks it from every contact (foreign-key cascade, which also keeps the counts current).
func (h *Labels) remove(ctx context.Context, k labelKind, id uuid.UUID) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := h.lockKind(ctx, tx, org, k); err != nil {
			return err
		}
		title, err := h.queries.LabelDelete(ctx, tx, dbq.LabelDeleteParams{OrganizationID: org, Kind: k.name, ID: id})
		if err != nil {
			return k.classify(err)
		}
		if err := h.queries.LabelRenumber(ctx, tx, dbq.LabelRenumberParams{OrganizationID: org, Kind: k.name}); err != nil {
			return err
		}
		if k == tagLabels {
			// Mailboxes carry tag ids in an array (no foreign key), so a deleted tag is taken off them here.
			if err := h.queries.MailboxesDropTag(ctx, tx, dbq.MailboxesDropTagParams{OrganizationID: org, Tag: id}); err != nil {
				return err
			}
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "label.deleted", EntityType: audit.EntityLabel, EntityID: id.String(),
			Metadata: map[string]any{"kind": k.name, "title": title}})
	})
}

// move puts a label at position (clamped to 0..n-1), renumbers its kind densely in one transaction and
// returns the whole new order. Besides the per-kind lock, the kind's rows are read FOR UPDATE, so a writer
// that changes positions without that lock still cannot interleave with the renumbering.
func (h *Labels) move(ctx context.Context, k labelKind, id uuid.UUID, req *api.MoveLabel) ([]api.LabelOrder, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var order []uuid.UUID
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := h.lockKind(ctx, tx, org, k); err != nil {
			return err
		}
		rows, err := h.queries.LabelOrderForUpdate(ctx, tx, dbq.LabelOrderForUpdateParams{OrganizationID: org, Kind: k.name})
		if err != nil {
			return err
		}
		from := -1
		for i, r := range rows {
			if r.ID == id {
				from = i
				break
			}
		}
		if from < 0 {
			return k.notFound()
		}
		to := min(max(req.Position, 0), len(rows)-1)
		order = make([]uuid.UUID, 0, len(rows))
		for _, r := range rows {
			if r.ID != id {
				order = append(order, r.ID)
			}
		}
		order = append(order[:to], append([]uuid.UUID{id}, order[to:]...)...)
		if err := h.queries.LabelSetPositions(ctx, tx, dbq.LabelSetPositionsParams{OrganizationID: org, Ids: order}); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "label.moved", EntityType: audit.EntityLabel, EntityID: id.String(),
			Metadata: map[string]any{"kind": k.name, "title": rows[from].Title, "from": from, "position": to}})
	})
	if err != nil {
		return nil, err
	}
	out := make([]api.LabelOrder, len(order))
	for i, lid := range order {
		out[i] = api.LabelOrder{ID: lid, Position: i}
	}
	return out, nil
}

// LabelsCreateFolder adds a campaign folder at the end of the folder order.
func (h *Labels) LabelsCreateFolder(ctx context.Context, req *api.CreateLabel, _ api.LabelsCreateFolderParams) (*api.Label, error) {
	return h.create(ctx, folderLabels, req)
}

// LabelsUpdateFolder renames or recolours a campaign folder.
func (h *Labels) LabelsUpdateFolder(ctx context.Context, req *api.UpdateLabel, params api.LabelsUpdateFolderParams) (*api.Label, error) {
	return h.update(ctx, folderLabels, params.ID, req)
}

// LabelsDeleteFolder removes a campaign folder and closes the gap in the folder order.
func (h *Labels) LabelsDeleteFolder(ctx context.Context, params api.LabelsDeleteFolderParams) error {
	return h.remove(ctx, folderLabels, params.ID)
}

// LabelsMoveFolder reorders a campaign folder and returns the new folder order.
func (h *Labels) LabelsMoveFolder(ctx context.Context, req *api.MoveLabel, params api.LabelsMoveFolderParams) ([]api.LabelOrder, error) {
	return h.move(ctx, folderLabels, params.ID, req)
}

// LabelsCreateTag adds a mailbox tag at the end of the tag order.
func (h *Labels) LabelsCreateTag(ctx context.Context, req *api.CreateLabel, _ api.LabelsCreateTagParams) (*api.Label, error) {
	return h.create(ctx, tagLabels, req)
}

// LabelsUpdateTag renames or recolours a mailbox tag.
func (h *Labels) LabelsUpdateTag(ctx context.Context, req *api.UpdateLabel, params api.LabelsUpdateTagParams) (*api.Label, error) {
	return h.update(ctx, tagLabels, params.ID, req)
}

// LabelsDeleteTag removes a mailbox tag and closes the gap in the tag order.
func (h *Labels) LabelsDeleteTag(ctx context.Context, params api.LabelsDeleteTagParams) error {
	return h.remove(ctx, tagLabels, params.ID)
}

// LabelsMoveTag reorders a mailbox tag and returns the new tag order.
func (h *Labels) LabelsMoveTag(ctx context.Context, req *api.MoveLabel, params api.LabelsMoveTagParams) ([]api.LabelOrder, error) {
	return h.move(ctx, tagLabels, params.ID, req)
}

// LabelsCreateCategory adds a contact category at the end of the category order.
func (h *Labels) LabelsCreateCategory(ctx context.Context, req *api.CreateLabel, _ api.LabelsCreateCategoryParams) (*api.Label, error) {
	return h.create(ctx, categoryLabels, req)
}

// LabelsUpdateCategory renames or recolours a contact category.
func (h *Labels) LabelsUpdateCategory(ctx context.Context, req *api.UpdateLabel, params api.LabelsUpdateCategoryParams) (*api.Label, error) {
	return h.update(ctx, categoryLabels, params.ID, req)
}

// LabelsDeleteCategory removes a contact category, unlinks it from every contact and closes the gap in the
// category order.
func (h *Labels) LabelsDeleteCategory(ctx context.Context, params api.LabelsDeleteCategoryParams) error {
	return h.remove(ctx, categoryLabels, params.ID)
}

// LabelsMoveCategory reorders a contact category and returns the new category order.
func (h *Labels) LabelsMoveCategory(ctx context.Context, req *api.MoveLabel, params api.LabelsMoveCategoryParams) ([]api.LabelOrder, error) {
	return h.move(ctx, categoryLabels, params.ID, req)
}
