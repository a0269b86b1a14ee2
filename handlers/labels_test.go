package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/audience/contacts"
)

// labelRegistry drives one kind of label (folders, tags or categories) through the generated client.
type labelRegistry struct {
	kind   string
	create func(ctx context.Context, c *api.Client, title, color string) (*api.Label, error)
	update func(ctx context.Context, c *api.Client, id uuid.UUID, req *api.UpdateLabel) (*api.Label, error)
	del    func(ctx context.Context, c *api.Client, id uuid.UUID) error
	move   func(ctx context.Context, c *api.Client, id uuid.UUID, position int) ([]api.LabelOrder, error)
}

func createLabelReq(title, color string) *api.CreateLabel {
	req := &api.CreateLabel{Title: title}
	if color != "" {
		req.Color = api.NewOptString(color)
	}
	return req
}

var labelRegistries = []labelRegistry{
	{
		kind: "folder",
		create: func(ctx context.Context, c *api.Client, title, color string) (*api.Label, error) {
			return c.LabelsCreateFolder(ctx, createLabelReq(title, color), api.LabelsCreateFolderParams{})
		},
		update: func(ctx context.Context, c *api.Client, id uuid.UUID, req *api.UpdateLabel) (*api.Label, error) {
			return c.LabelsUpdateFolder(ctx, req, api.LabelsUpdateFolderParams{ID: id})
		},
		del: func(ctx context.Context, c *api.Client, id uuid.UUID) error {
			return c.LabelsDeleteFolder(ctx, api.LabelsDeleteFolderParams{ID: id})
		},
		move: func(ctx context.Context, c *api.Client, id uuid.UUID, position int) ([]api.LabelOrder, error) {
			return c.LabelsMoveFolder(ctx, &api.MoveLabel{Position: position}, api.LabelsMoveFolderParams{ID: id})
		},
	},
	{
		kind: "tag",
		create: func(ctx context.Context, c *api.Client, title, color string) (*api.Label, error) {
			return c.LabelsCreateTag(ctx, createLabelReq(title, color), api.LabelsCreateTagParams{})
		},
		update: func(ctx context.Context, c *api.Client, id uuid.UUID, req *api.UpdateLabel) (*api.Label, error) {
			return c.LabelsUpdateTag(ctx, req, api.LabelsUpdateTagParams{ID: id})
		},
		del: func(ctx context.Context, c *api.Client, id uuid.UUID) error {
			return c.LabelsDeleteTag(ctx, api.LabelsDeleteTagParams{ID: id})
		},
		move: func(ctx context.Context, c *api.Client, id uuid.UUID, position int) ([]api.LabelOrder, error) {
			return c.LabelsMoveTag(ctx, &api.MoveLabel{Position: position}, api.LabelsMoveTagParams{ID: id})
		},
	},
	{
		kind: "category",
		create: func(ctx context.Context, c *api.Client, title, color string) (*api.Label, error) {
			return c.LabelsCreateCategory(ctx, createLabelReq(title, color), api.LabelsCreateCategoryParams{})
		},
		update: func(ctx context.Context, c *api.Client, id uuid.UUID, req *api.UpdateLabel) (*api.Label, error) {
			return c.LabelsUpdateCategory(ctx, req, api.LabelsUpdateCategoryParams{ID: id})
		},
		del: func(ctx context.Context, c *api.Client, id uuid.UUID) error {
			return c.LabelsDeleteCategory(ctx, api.LabelsDeleteCategoryParams{ID: id})
		},
		move: func(ctx context.Context, c *api.Client, id uuid.UUID, position int) ([]api.LabelOrder, error) {
			return c.LabelsMoveCategory(ctx, &api.MoveLabel{Position: position}, api.LabelsMoveCategoryParams{ID: id})
		},
	},
}

func labelOrderIDs(order []api.LabelOrder) []uuid.UUID {
	out := make([]uuid.UUID, len(order))
	for i, o := range order {
		out[i] = o.ID
	}
	return out
}

// requireDenseOrder checks an order answer numbers its entries 0..n-1.
func requireDenseOrder(t *testing.T, order []api.LabelOrder) {
	t.Helper()
	for i, o := range order {
		require.Equal(t, i, o.Position, "position of %s", o.ID)
	}
}

// storedLabelOrder reads one kind's labels as stored, by position then id, with their positions.
func storedLabelOrder(t *testing.T, owner *pgxpool.Pool, org uuid.UUID, kind string) ([]uuid.UUID, []int) {
	t.Helper()
	rows, err := owner.Query(context.Background(),
		"SELECT id, position FROM labels WHERE organization_id = $1 AND kind = $2 ORDER BY position, id", org, kind)
	require.NoError(t, err)
	var ids []uuid.UUID
	var positions []int
	for rows.Next() {
		var id uuid.UUID
		var pos int
		require.NoError(t, rows.Scan(&id, &pos))
		ids, positions = append(ids, id), append(positions, pos)
	}
	require.NoError(t, rows.Err())
	return ids, positions
}

func TestLabelsCreateUpdateMoveDelete(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	owner := env.DB.OwnerPool(t)

	for _, r := range labelRegistries {
		t.Run(r.kind, func(t *testing.T) {
			a, err := r.create(ctx, c, "  Alpha  ", "#3B82F6")
			require.NoError(t, err)
			require.Equal(t, "Alpha", a.Title, "title is trimmed")
			require.Equal(t, "#3b82f6", a.Color, "colour is lowercased")
			require.Equal(t, 0, a.Position)
			b, err := r.create(ctx, c, "Beta", "")
			require.NoError(t, err)
			require.Empty(t, b.Color)
			require.Equal(t, 1, b.Position)
			cc, err := r.create(ctx, c, "Gamma", "#F80")
			require.NoError(t, err)
			require.Equal(t, "#f80", cc.Color, "the short form is kept, lowercased")
			require.Equal(t, 2, cc.Position, "a new label goes to the end")
			d, err := r.create(ctx, c, "Alpha", "")
			require.NoError(t, err, "titles need not be unique")
			require.Equal(t, 3, d.Position)

			// Renaming keeps the colour; recolouring keeps the title; an empty colour clears it.
			up, err := r.update(ctx, c, a.ID, &api.UpdateLabel{Title: api.NewOptString(" Alpha one ")})
			require.NoError(t, err)
			require.Equal(t, "Alpha one", up.Title)
			require.Equal(t, "#3b82f6", up.Color)
			require.Equal(t, 0, up.Position)
			require.False(t, up.UpdatedAt.Before(a.UpdatedAt))
			up, err = r.update(ctx, c, a.ID, &api.UpdateLabel{Color: api.NewOptString("#ABCDEF")})
			require.NoError(t, err)
			require.Equal(t, "Alpha one", up.Title)
			require.Equal(t, "#abcdef", up.Color)
			up, err = r.update(ctx, c, a.ID, &api.UpdateLabel{Color: api.NewOptString("")})
			require.NoError(t, err)
			require.Empty(t, up.Color)
			same, err := r.update(ctx, c, a.ID, &api.UpdateLabel{})
			require.NoError(t, err, "an empty patch returns the label unchanged")
			require.Equal(t, up, same)

			// Moves: to the front, past the end (clamped to the last place), below zero (clamped to the first).
			order, err := r.move(ctx, c, cc.ID, 0)
			require.NoError(t, err)
			require.Equal(t, []uuid.UUID{cc.ID, a.ID, b.ID, d.ID}, labelOrderIDs(order))
			requireDenseOrder(t, order)
			order, err = r.move(ctx, c, cc.ID, 99)
			require.NoError(t, err)
			require.Equal(t, []uuid.UUID{a.ID, b.ID, d.ID, cc.ID}, labelOrderIDs(order))
			requireDenseOrder(t, order)
			order, err = r.move(ctx, c, d.ID, -5)
			require.NoError(t, err)
			require.Equal(t, []uuid.UUID{d.ID, a.ID, b.ID, cc.ID}, labelOrderIDs(order))
			requireDenseOrder(t, order)
			order, err = r.move(ctx, c, a.ID, 2)
			require.NoError(t, err)
			require.Equal(t, []uuid.UUID{d.ID, b.ID, a.ID, cc.ID}, labelOrderIDs(order))
			requireDenseOrder(t, order)
			ids, positions := storedLabelOrder(t, owner, boot.OrganizationID, r.kind)
			require.Equal(t, labelOrderIDs(order), ids, "the answer is the stored order")
			require.Equal(t, []int{0, 1, 2, 3}, positions)

			// Deleting closes the gap; a second delete, an update or a move of the deleted label is 404.
			require.NoError(t, r.del(ctx, c, b.ID))
			ids, positions = storedLabelOrder(t, owner, boot.OrganizationID, r.kind)
			require.Equal(t, []uuid.UUID{d.ID, a.ID, cc.ID}, ids)
			require.Equal(t, []int{0, 1, 2}, positions)
			requireAPIError(t, r.del(ctx, c, b.ID), http.StatusNotFound, "label_not_found")
			_, err = r.update(ctx, c, b.ID, &api.UpdateLabel{Title: api.NewOptString("x")})
			requireAPIError(t, err, http.StatusNotFound, "label_not_found")
			_, err = r.move(ctx, c, b.ID, 0)
			requireAPIError(t, err, http.StatusNotFound, "label_not_found")

			// A label created after a delete takes the next place of the dense order.
			e, err := r.create(ctx, c, "Epsilon", "")
			require.NoError(t, err)
			require.Equal(t, 3, e.Position)
		})
	}

	// Each write left an audit entry naming the kind and the title.
	rows, err := owner.Query(ctx, `SELECT event, metadata->>'kind', metadata->>'title' FROM audit_log
		WHERE organization_id = $1 AND target_type = 'label' AND target_id = (
		  SELECT id::text FROM labels WHERE organization_id = $1 AND kind = 'category' AND title = 'Alpha one')
		ORDER BY created_at, id`, boot.OrganizationID)
	require.NoError(t, err)
	var entries []string
	for rows.Next() {
		var action, kind, title string
		require.NoError(t, rows.Scan(&action, &kind, &title))
		entries = append(entries, action+" "+kind+" "+title)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"label.created category Alpha", "label.updated category Alpha one",
		"label.updated category Alpha one", "label.updated category Alpha one", "label.moved category Alpha one"}, entries,
		"the empty patch writes nothing")
	var deleted int
	require.NoError(t, owner.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE organization_id = $1
		AND event = 'label.deleted' AND metadata->>'title' = 'Beta'`, boot.OrganizationID).Scan(&deleted))
	require.Equal(t, 3, deleted, "one delete per kind")
}

func TestLabelsValidation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	owner := env.DB.OwnerPool(t)

	for _, r := range labelRegistries {
		t.Run(r.kind, func(t *testing.T) {
			for _, title := range []string{"", "   ", strings.Repeat("x", 101), "two\nlines", "tab\there"} {
				_, err := r.create(ctx, c, title, "")
				requireAPIError(t, err, http.StatusBadRequest, "invalid_title")
			}
			for _, color := range []string{"red", "3b82f6", "#3b82f", "#3b82f6a", "#ggg", "#12", "rgb(1,2,3)"} {
				_, err := r.create(ctx, c, "Valid", color)
				requireAPIError(t, err, http.StatusBadRequest, "invalid_color")
			}
			ids, _ := storedLabelOrder(t, owner, boot.OrganizationID, r.kind)
			require.Empty(t, ids, "a refused create writes nothing")

			long, err := r.create(ctx, c, strings.Repeat("é", 100), " #ABC ")
			require.NoError(t, err, "100 characters is the limit, however many bytes they take")
			require.Equal(t, "#abc", long.Color)

			_, err = r.update(ctx, c, long.ID, &api.UpdateLabel{Title: api.NewOptString(" ")})
			requireAPIError(t, err, http.StatusBadRequest, "invalid_title")
			_, err = r.update(ctx, c, long.ID, &api.UpdateLabel{Title: api.NewOptString("Fine"), Color: api.NewOptString("blue")})
			requireAPIError(t, err, http.StatusBadRequest, "invalid_color")
			var title, color string
			require.NoError(t, owner.QueryRow(ctx, "SELECT title, color FROM labels WHERE organization_id = $1 AND id = $2",
				boot.OrganizationID, long.ID).Scan(&title, &color))
			require.Equal(t, strings.Repeat("é", 100), title, "a refused update changes nothing")
			require.Equal(t, "#abc", color)
		})
	}
}

func TestLabelsCapPerKind(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	other := env.Bootstrap(t, "globex")
	c := env.Client(t, boot.APIKey)
	owner := env.DB.OwnerPool(t)

	// 499 folders already exist; the 500th fits at the end, the 501st is refused.
	_, err := owner.Exec(ctx, `INSERT INTO labels (organization_id, id, kind, title, position)
		SELECT $1, gen_random_uuid(), 'folder', 'f' || i, i FROM generate_series(0, 498) AS i`, boot.OrganizationID)
	require.NoError(t, err)
	last, err := labelRegistries[0].create(ctx, c, "Last", "")
	require.NoError(t, err)
	require.Equal(t, 499, last.Position)
	_, err = labelRegistries[0].create(ctx, c, "One too many", "")
	requireAPIError(t, err, http.StatusBadRequest, "too_many_labels")
	ids, _ := storedLabelOrder(t, owner, boot.OrganizationID, "folder")
	require.Len(t, ids, 500)

	// The cap counts one kind of one organization: tags and categories, and other organizations, still fit.
	_, err = labelRegistries[1].create(ctx, c, "Tag", "")
	require.NoError(t, err)
	_, err = labelRegistries[2].create(ctx, c, "Category", "")
	require.NoError(t, err)
	_, err = labelRegistries[0].create(ctx, env.Client(t, other.APIKey), "Folder", "")
	require.NoError(t, err)

	// Deleting one makes room again.
	require.NoError(t, labelRegistries[0].del(ctx, c, last.ID))
	again, err := labelRegistries[0].create(ctx, c, "Again", "")
	require.NoError(t, err)
	require.Equal(t, 499, again.Position)
}

func TestLabelsForeignIDsAreNotFound(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	otherBoot := env.Bootstrap(t, "globex")
	other := env.Client(t, otherBoot.APIKey)
	owner := env.DB.OwnerPool(t)

	for i, r := range labelRegistries {
		mine, err := r.create(ctx, c, "Mine "+r.kind, "")
		require.NoError(t, err)
		theirs, err := r.create(ctx, other, "Theirs "+r.kind, "")
		require.NoError(t, err)

		// Another organization's label of the same kind is unknown here.
		_, err = r.update(ctx, c, theirs.ID, &api.UpdateLabel{Title: api.NewOptString("stolen")})
		requireAPIError(t, err, http.StatusNotFound, "label_not_found")
		_, err = r.move(ctx, c, theirs.ID, 0)
		requireAPIError(t, err, http.StatusNotFound, "label_not_found")
		requireAPIError(t, r.del(ctx, c, theirs.ID), http.StatusNotFound, "label_not_found")

		// A label of one kind is unknown to the routes of the other kinds.
		for j, wrong := range labelRegistries {
			if j == i {
				continue
			}
			_, err = wrong.update(ctx, c, mine.ID, &api.UpdateLabel{Title: api.NewOptString("wrong kind")})
			requireAPIError(t, err, http.StatusNotFound, "label_not_found")
			_, err = wrong.move(ctx, c, mine.ID, 0)
			requireAPIError(t, err, http.StatusNotFound, "label_not_found")
			requireAPIError(t, wrong.del(ctx, c, mine.ID), http.StatusNotFound, "label_not_found")
		}
	}

	// Nothing was changed or removed by the refused calls.
	var titles []string
	rows, err := owner.Query(ctx, "SELECT title FROM labels ORDER BY title")
	require.NoError(t, err)
	titles, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"Mine category", "Mine folder", "Mine tag", "Theirs category", "Theirs folder", "Theirs tag"}, titles)
}

func TestLabelsDeleteCategoryUnlinksContacts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	owner := env.DB.OwnerPool(t)

	vip, err := c.LabelsCreateCategory(ctx, &api.CreateLabel{Title: "VIP"}, api.LabelsCreateCategoryParams{})
	require.NoError(t, err)
	lead, err := c.LabelsCreateCategory(ctx, &api.CreateLabel{Title: "Lead"}, api.LabelsCreateCategoryParams{})
	require.NoError(t, err)
	contact, createdAt, err := contacts.NewID()
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `INSERT INTO contacts (organization_id, id, email, created_at, updated_at) VALUES ($1, $2, 'ada@example.com', $3, $3)`,
		boot.OrganizationID, contact, createdAt)
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `INSERT INTO contact_categories (organization_id, contact_id, category_id) VALUES ($1, $2, $3), ($1, $2, $4)`,
		boot.OrganizationID, contact, vip.ID, lead.ID)
	require.NoError(t, err)

	require.NoError(t, c.LabelsDeleteCategory(ctx, api.LabelsDeleteCategoryParams{ID: vip.ID}))

	rows, err := owner.Query(ctx, "SELECT category_id FROM contact_categories WHERE organization_id = $1 AND contact_id = $2",
		boot.OrganizationID, contact)
	require.NoError(t, err)
	linked, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{lead.ID}, linked, "the deleted category is unlinked, the other stays")
	var contactCount int64
	var position int
	require.NoError(t, owner.QueryRow(ctx, "SELECT contact_count, position FROM labels WHERE organization_id = $1 AND id = $2",
		boot.OrganizationID, lead.ID).Scan(&contactCount, &position))
	require.Equal(t, int64(1), contactCount)
	require.Equal(t, 0, position, "the remaining category moved up")
	var contactsLeft int
	require.NoError(t, owner.QueryRow(ctx, "SELECT count(*) FROM contacts WHERE organization_id = $1", boot.OrganizationID).Scan(&contactsLeft))
	require.Equal(t, 1, contactsLeft, "the contact itself stays")
}

func TestLabelsConcurrentWritesKeepOrderDense(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	owner := env.DB.OwnerPool(t)
	tags := labelRegistries[1]

	var seed []uuid.UUID
	for i := range 6 {
		l, err := tags.create(ctx, c, fmt.Sprintf("seed %d", i), "")
		require.NoError(t, err)
		seed = append(seed, l.ID)
	}
	// Creates, moves and deletes race; afterwards the order is still 0..n-1 with no gaps or repeats.
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for i := range 10 {
		wg.Add(3)
		go func() {
			defer wg.Done()
			_, err := tags.create(ctx, c, fmt.Sprintf("new %d", i), "")
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := tags.move(ctx, c, seed[i%4], (i*7)%9)
			errs <- err
		}()
		go func() {
			defer wg.Done()
			if i < 2 {
				errs <- tags.del(ctx, c, seed[4+i])
				return
			}
			_, err := tags.move(ctx, c, seed[i%4], 0)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	ids, positions := storedLabelOrder(t, owner, boot.OrganizationID, "tag")
	require.Len(t, ids, 14)
	for i, p := range positions {
		require.Equal(t, i, p)
	}
}
