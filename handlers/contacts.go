package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/leadgate"
	"github.com/outflowhq/outflow/internal/audience/activity"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/audience/suppression"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
	"github.com/outflowhq/outflow/internal/platform/truncate"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Contacts implements the contact list itself: create or enrich, search, bulk update and delete, and one
// contact's read, update, delete and lookup.
type Contacts struct {
	pool    *pgxpool.Pool
	cursors *pagination.Cursors
	queries *dbq.Queries
	outbox  *events.Outbox
	jobs    events.Inserter
	gate    *leadgate.Gate
}

// NewContacts builds the contact operations; search cursors are signed with a key derived from secret, and the
// leads and segment pins a write asks for go through gate (an agent's for campaigns that send may wait for a
// person).
func NewContacts(pool *pgxpool.Pool, secret []byte, outbox *events.Outbox, jobs events.Inserter, gate *leadgate.Gate) *Contacts {
	return &Contacts{pool: pool, cursors: pagination.NewCursors(secret), queries: dbq.New(), outbox: outbox, jobs: jobs, gate: gate}
}

// Limits of the contact operations.
const (
	// maxCreateBatch is the most contacts one POST /contacts takes; files go through the import.
	maxCreateBatch = 1000
	// createdEventLimit: a request adding more contacts than this raises no contact.created events.
	createdEventLimit = 100
	maxLinkIDs        = 100
)

var errContactNotFound = apierror.NotFound("contact_not_found", "No contact with that id in this organization.")

// contactInput is one validated element of POST /contacts.
type contactInput struct {
	email, first, last, company, phone string
	custom                             map[string]string
	subscribed                         *bool
	verdict                            *contacts.Verdict
	provider                           string
	campaigns, categories, segments    []uuid.UUID
}

func parseContactCreate(i int, c api.ContactCreate) (contactInput, error) {
	at := func(err error) error {
		var e *apierror.Error
		if errors.As(err, &e) {
			return apierror.BadRequest(e.Code, fmt.Sprintf("Contact %d: %s", i, e.Message))
		}
		return err
	}
	email, ok := contacts.NormalizeEmail(c.Email)
	if !ok {
		return contactInput{}, apierror.BadRequest("invalid_email", fmt.Sprintf("Contact %d: %q is not an email address.", i, truncate.Chars(c.Email, 100)))
	}
	in := contactInput{email: email, first: strings.TrimSpace(c.FirstName.Value), last: strings.TrimSpace(c.LastName.Value),
		company: strings.TrimSpace(c.Company.Value), phone: strings.TrimSpace(c.Phone.Value)}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"first_name", in.first, contacts.MaxNameLen}, {"last_name", in.last, contacts.MaxNameLen},
		{"company", in.company, contacts.MaxNameLen}, {"phone", in.phone, contacts.MaxPhoneLen}} {
		if err := contacts.CheckText(f.name, f.v, f.max); err != nil {
			return contactInput{}, at(err)
		}
	}
	if c.CustomFields.Set {
		if err := contacts.CheckCustomFields(c.CustomFields.Value); err != nil {
			return contactInput{}, at(err)
		}
		in.custom = map[string]string{}
		for k, v := range c.CustomFields.Value {
			if v != "" { // empty values are kept as stored; PATCH /contacts/{id} clears
				in.custom[k] = v
			}
		}
	}
	if v, ok := c.Subscribed.Get(); ok {
		in.subscribed = &v
	}
	provider := strings.TrimSpace(c.VerificationProvider.Value)
	if provider != "" && !contacts.KnownProvider(provider) {
		_, _, err := contacts.ParseImportedVerdict(provider, "")
		return contactInput{}, at(err)
	}
	if status := strings.TrimSpace(c.VerificationStatus.Value); status != "" {
		v, p, err := contacts.ParseImportedVerdict(provider, status)
		if err != nil {
			return contactInput{}, at(err)
		}
		in.verdict, in.provider = &v, p
	}
	in.campaigns, in.categories, in.segments = dedupIDs(c.Campaigns), dedupIDs(c.Categories), dedupIDs(c.Segments)
	return in, nil
}

// ContactsCreate creates contacts or enriches existing ones matched by address, links their campaigns and
// categories and pins their segments, all in one transaction after every reference has been checked. An
// agent's leads for campaigns that send (and pins into segments linked to one) outside its policy wait for a
// person: 202 with the approval.
func (h *Contacts) ContactsCreate(ctx context.Context, req []api.ContactCreate, _ api.ContactsCreateParams) (api.ContactsCreateRes, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	// The schema requires at least one contact; the server refuses an empty array before this runs.
	if len(req) > maxCreateBatch {
		return nil, apierror.BadRequest("too_many_items", fmt.Sprintf("Send at most %d contacts per call; import larger lists as a file.", maxCreateBatch))
	}
	inputs := make([]contactInput, len(req))
	var campaigns, categories, segments []uuid.UUID
	for i, c := range req {
		if inputs[i], err = parseContactCreate(i, c); err != nil {
			return nil, err
		}
		campaigns = append(campaigns, inputs[i].campaigns...)
		categories = append(categories, inputs[i].categories...)
		segments = append(segments, inputs[i].segments...)
	}
	source := contactSource(ctx)
	var out []api.Contact
	var held *leadgate.Held
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := checkLinkRefs(ctx, tx, org, campaigns, categories, segments); err != nil {
			return err
		}
		p := auth.PrincipalFrom(ctx)
		watch, err := watchAddresses(ctx, tx, h.gate, p, inputs)
		if err != nil {
			return err
		}
		ids := make([]uuid.UUID, len(inputs))
		var created, updated []uuid.UUID
		for i, in := range inputs {
			id, at, err := contacts.NewID()
			if err != nil {
				return err
			}
			var status, sub, provider *string
			if in.verdict != nil {
				s, ss, p := string(in.verdict.Status), in.verdict.SubStatus, in.provider
				status, sub, provider = &s, &ss, &p
			}
			custom := in.custom
			if custom == nil {
				custom = map[string]string{}
			}
			doc, err := json.Marshal(custom)
			if err != nil {
				return err
			}
			var subscribed pgtype.Bool
			if in.subscribed != nil {
				subscribed = pgtype.Bool{Bool: *in.subscribed, Valid: true}
			}
			row, err := h.queries.ContactUpsert(ctx, tx, dbq.ContactUpsertParams{OrganizationID: org, ID: id, Email: in.email,
				FirstName: in.first, LastName: in.last, Company: in.company, Phone: in.phone, CustomFields: doc,
				Subscribed: subscribed, Source: source, VerificationStatus: status, VerificationSubStatus: sub,
				VerificationProvider: provider, CreatedAt: at})
			if err != nil {
				return fmt.Errorf("upsert contact: %w", err)
			}
			ids[i] = row.ID
			if slices.Contains(created, ids[i]) || slices.Contains(updated, ids[i]) {
				continue // the same address twice in one request
			}
			if row.Inserted {
				created = append(created, ids[i])
			} else {
				updated = append(updated, ids[i])
			}
		}
		adds := leadgate.Request{Changed: dedupIDs(ids), Watch: watch, Event: "contacts.created"}
		for i, in := range inputs {
			if err := linkCategories(ctx, tx, org, []uuid.UUID{ids[i]}, in.categories); err != nil {
				return err
			}
			adds.Leads = append(adds.Leads, leadsOf(ids[i:i+1], in.campaigns)...)
			adds.Pins = append(adds.Pins, pinsOf(ids[i:i+1], in.segments)...)
		}
		added, err := h.gate.Add(ctx, tx, p, adds, time.Now())
		if err != nil {
			return err
		}
		held = added.Held
		if len(created) > 0 {
			if err := activity.Record(ctx, tx, activity.Entry{ContactIDs: created, UserID: actorUser(ctx), Type: "contact_created",
				Metadata: map[string]any{"source": source}}); err != nil {
				return err
			}
		}
		if len(updated) > 0 {
			if err := activity.Record(ctx, tx, activity.Entry{ContactIDs: updated, UserID: actorUser(ctx), Type: "contact_updated",
				Metadata: map[string]any{"source": source}}); err != nil {
				return err
			}
		}
		rows, err := contacts.ByIDs(ctx, tx, org, dedupIDs(ids))
		if err != nil {
			return err
		}
		views, err := contactViews(ctx, tx, org, rows, nil)
		if err != nil {
			return err
		}
		byID := make(map[uuid.UUID]api.Contact, len(views))
		for _, v := range views {
			byID[v.ID] = v
		}
		for _, id := range dedupIDs(ids) {
			out = append(out, byID[id])
		}
		if len(created) > 0 && len(created) <= createdEventLimit {
			for _, id := range created {
				v := byID[id]
				if _, err := h.outbox.Emit(ctx, tx, events.ContactCreated, contactCreatedData(v, source)); err != nil {
					return err
				}
			}
		}
		if len(updated) == 1 {
			if _, err := h.outbox.Emit(ctx, tx, events.ContactUpdated, map[string]any{"entity_id": updated[0]}); err != nil {
				return err
			}
		} else if len(updated) > 1 {
			if _, err := h.outbox.Emit(ctx, tx, events.ContactUpdated, bulkEventData(len(updated))); err != nil {
				return err
			}
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "contacts.created", EntityType: audit.EntityContact,
			Metadata: map[string]any{"created": len(created), "updated": len(updated)}})
	})
	if err != nil {
		return nil, err
	}
	if held != nil {
		return &api.ContactsHeld{Contacts: out, Approval: heldLeads(held)}, nil
	}
	res := api.ContactsCreateOKApplicationJSON(out)
	return &res, nil
}

func contactCreatedData(c api.Contact, source string) map[string]any {
	campaigns := make([]string, len(c.Campaigns))
	for i, k := range c.Campaigns {
		campaigns[i] = k.ID
	}
	categories := make([]uuid.UUID, len(c.Categories))
	for i, k := range c.Categories {
		categories[i] = k.ID
	}
	return map[string]any{
		"contact_id": c.ID, "contact_email": c.Email, "first_name": c.FirstName, "last_name": c.LastName,
		"company": c.Company, "phone": c.Phone, "subscribed": c.Subscribed, "custom_fields": c.CustomFields,
		"source": source, "source_detail": nil, "campaign_ids": campaigns, "category_ids": categories,
		"created_at": c.CreatedAt.UTC().Format(time.RFC3339Nano),
	}
}

// bulkEventData is the data of an event raised once for a whole bulk write.
func bulkEventData(n int) map[string]any {
	return map[string]any{"metadata": map[string]any{"bulk": true, "count": n}}
}

// loadContact reads one contact of the organization, 404 when there is none.
func loadContact(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (contacts.Row, error) {
	rows, err := contacts.ByIDs(ctx, tx, org, []uuid.UUID{id})
	if err != nil {
		return contacts.Row{}, err
	}
	if len(rows) == 0 {
		return contacts.Row{}, errContactNotFound
	}
	return rows[0], nil
}

// ContactsGet answers one contact with its campaigns, categories, engagement totals and, when its address or
// domain is suppressed, the suppression in force.
func (h *Contacts) ContactsGet(ctx context.Context, params api.ContactsGetParams) (*api.ContactDetail, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var out api.ContactDetail
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err := loadContact(ctx, tx, org, params.ID)
		if err != nil {
			return err
		}
		views, err := contactViews(ctx, tx, org, []contacts.Row{row}, nil)
		if err != nil {
			return err
		}
		out = detailOf(views[0])
		var e api.ContactEngagement
		eng, err := h.queries.ContactEngagement(ctx, tx, dbq.ContactEngagementParams{OrganizationID: org, ContactID: row.ID})
		if err != nil {
			return fmt.Errorf("contact engagement: %w", err)
		}
		var complained int64
		sup, suppressed, err := suppression.InForce(ctx, tx, org, row.Email)
		if err != nil {
			return fmt.Errorf("contact suppression: %w", err)
		}
		if suppressed {
			if sup.Source == "complaint" {
				complained = 1
			}
			// The contact view's source vocabulary is bounce, complaint and unsubscribe; entries added by hand
			// or by an import report as an unsubscribe (the person is not to be mailed), their reason says which.
			src := sup.Source
			if src != "bounce" && src != "complaint" {
				src = "unsubscribe"
			}
			s := api.ContactSuppression{Reason: sup.Reason, Source: api.ContactSuppressionSource(src), ExpiresAt: optNilTime(sup.ExpiresAt), CreatedAt: sup.CreatedAt}
			out.Suppression = api.NewOptContactSuppression(s)
		}
		e.TotalSent, e.TotalOpened, e.TotalClicked = int(eng.Sent), int(eng.Opened), int(eng.Clicked)
		e.TotalReplied, e.TotalBounced, e.TotalComplained = int(eng.Replied), int(eng.Bounced), int(complained)
		e.LastSentAt, e.LastOpenedAt, e.LastClickedAt = optAnyTime(eng.LastSentAt), optAnyTime(eng.LastOpenedAt), optAnyTime(eng.LastClickedAt)
		e.LastRepliedAt, e.LastBouncedAt = optAnyTime(eng.LastRepliedAt), optAnyTime(eng.LastBouncedAt)
		out.Engagement = e
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// optAnyTime reads the max of a timestamp column, which sqlc types as any: a time, or NULL when no row had one.
func optAnyTime(v any) api.OptNilDateTime {
	t, ok := v.(time.Time)
	if !ok {
		return optNilTime(nil)
	}
	return optNilTime(&t)
}

// detailOf copies a contact into the detail shape (ogen flattens the schema's allOf into its own types).
func detailOf(c api.Contact) api.ContactDetail {
	d := api.ContactDetail{
		ID: c.ID, FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Company: c.Company, Phone: c.Phone,
		CustomFields: api.ContactDetailCustomFields(c.CustomFields), Subscribed: c.Subscribed, Campaigns: c.Campaigns,
		Categories: c.Categories, VerificationStatus: api.ContactDetailVerificationStatus(c.VerificationStatus),
		VerificationProvider: c.VerificationProvider, VerificationReason: c.VerificationReason, IsCatchAll: c.IsCatchAll,
		VerificationCheckedAt: c.VerificationCheckedAt, VerificationConfidence: c.VerificationConfidence,
		EspProvider: c.EspProvider, EspResolvedAt: c.EspResolvedAt, CampaignLead: c.CampaignLead,
		UpdatedAt: c.UpdatedAt, CreatedAt: c.CreatedAt,
	}
	if v, ok := c.VerificationSubStatus.Get(); ok {
		d.VerificationSubStatus = api.NewOptContactDetailVerificationSubStatus(api.ContactDetailVerificationSubStatus(v))
	}
	if v, ok := c.VerificationSource.Get(); ok {
		d.VerificationSource = api.NewOptContactDetailVerificationSource(api.ContactDetailVerificationSource(v))
	}
	return d
}

// ContactsLookup finds the contact of an address (the primary one when an import created duplicates).
func (h *Contacts) ContactsLookup(ctx context.Context, params api.ContactsLookupParams) (*api.ContactLookupResult, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	email, ok := contacts.NormalizeEmail(params.Email)
	if !ok {
		return nil, apierror.BadRequest("invalid_email", "email must be an email address.")
	}
	var out api.ContactLookupResult
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		id, err := h.queries.ContactIDByEmail(ctx, tx, dbq.ContactIDByEmailParams{OrganizationID: org, Email: email})
		if errors.Is(err, pgx.ErrNoRows) {
			return apierror.NotFound("contact_not_found", "No contact with that address in this organization.")
		}
		if err != nil {
			return err
		}
		row, err := loadContact(ctx, tx, org, id)
		if err != nil {
			return err
		}
		views, err := contactViews(ctx, tx, org, []contacts.Row{row}, nil)
		if err != nil {
			return err
		}
		out.Contact = views[0]
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ContactsUpdate changes one contact: sent text fields replace (empty clears, except email), custom_fields
// merge with an empty value removing its key, campaigns and categories replace the whole set when sent, and
// add_categories / remove_categories adjust it. An address another contact has is 409. An agent's new leads for
// campaigns that send outside its policy wait for a person: 202 with the approval.
func (h *Contacts) ContactsUpdate(ctx context.Context, req *api.ContactUpdate, params api.ContactsUpdateParams) (api.ContactsUpdateRes, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	// Unsent fields stay NULL, which keeps them; no custom key is dropped or put unless sent.
	upd := dbq.ContactUpdateParams{OrganizationID: org, ID: params.ID, DropCustom: []string{}, PutCustom: json.RawMessage(`{}`)}
	changes := []string{}
	if v, ok := req.Email.Get(); ok {
		email, ok := contacts.NormalizeEmail(v)
		if !ok {
			return nil, apierror.BadRequest("invalid_email", "email must be an email address.")
		}
		upd.Email = &email
		changes = append(changes, "email")
	}
	for _, f := range []struct {
		name string
		v    api.OptString
		max  int
		to   **string
	}{{"first_name", req.FirstName, contacts.MaxNameLen, &upd.FirstName}, {"last_name", req.LastName, contacts.MaxNameLen, &upd.LastName},
		{"company", req.Company, contacts.MaxNameLen, &upd.Company}, {"phone", req.Phone, contacts.MaxPhoneLen, &upd.Phone}} {
		if v, ok := f.v.Get(); ok {
			v = strings.TrimSpace(v)
			if err := contacts.CheckText(f.name, v, f.max); err != nil {
				return nil, err
			}
			*f.to = &v
			changes = append(changes, f.name)
		}
	}
	if req.CustomFields.Set {
		if err := contacts.CheckCustomFields(req.CustomFields.Value); err != nil {
			return nil, err
		}
		put := map[string]string{}
		for k, v := range req.CustomFields.Value {
			if v == "" {
				upd.DropCustom = append(upd.DropCustom, k)
			} else {
				put[k] = v
			}
		}
		if upd.PutCustom, err = json.Marshal(put); err != nil {
			return nil, err
		}
		changes = append(changes, "custom_fields")
	}
	if v, ok := req.Subscribed.Get(); ok {
		upd.Subscribed = pgtype.Bool{Bool: v, Valid: true}
		changes = append(changes, "subscribed")
	}
	fields := len(changes) > 0 // the contact's own columns change
	campaigns, categories := dedupIDs(req.Campaigns), dedupIDs(req.Categories)
	addCats, removeCats := dedupIDs(req.AddCategories), dedupIDs(req.RemoveCategories)
	var out api.Contact
	var held *leadgate.Held
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err := loadContact(ctx, tx, org, params.ID)
		if err != nil {
			return err
		}
		if err := checkLinkRefs(ctx, tx, org, campaigns, append(append(slices.Clone(categories), addCats...), removeCats...), nil); err != nil {
			return err
		}
		p := auth.PrincipalFrom(ctx)
		ids := []uuid.UUID{row.ID}
		watch, err := h.gate.Watch(ctx, tx, p, ids)
		if err != nil {
			return err
		}
		if fields {
			if err := h.queries.ContactUpdate(ctx, tx, upd); err != nil {
				var pgErr *pgconn.PgError
				if errors.As(err, &pgErr) && pgErr.Code == "23505" {
					return apierror.New(409, "contact_email_taken", "Another contact already has that address.")
				}
				return fmt.Errorf("update contact: %w", err)
			}
		}
		// The campaigns go through the gate last, with what the rest of the change brings into linked segments.
		adds := leadgate.Request{Changed: ids, Watch: watch, Event: "contacts.updated"}
		if req.Campaigns != nil {
			current, err := h.queries.ContactLinksCampaignIDs(ctx, tx, dbq.ContactLinksCampaignIDsParams{OrganizationID: org, ContactID: row.ID})
			if err != nil {
				return err
			}
			if err := unlinkContacts(ctx, tx, org, ids, without(current, campaigns), nil); err != nil {
				return err
			}
			adds.Leads = leadsOf(ids, campaigns)
			changes = append(changes, "campaigns")
		}
		if req.Categories != nil || len(addCats) > 0 || len(removeCats) > 0 {
			current, err := h.queries.ContactLinksCategoryIDs(ctx, tx, dbq.ContactLinksCategoryIDsParams{OrganizationID: org, ContactID: row.ID})
			if err != nil {
				return err
			}
			want := current
			if req.Categories != nil {
				want = categories
			}
			want = without(dedupIDs(append(slices.Clone(want), addCats...)), removeCats)
			if err := unlinkContacts(ctx, tx, org, ids, nil, without(current, want)); err != nil {
				return err
			}
			if err := linkCategories(ctx, tx, org, ids, without(want, current)); err != nil {
				return err
			}
			if !fields {
				if err := h.queries.ContactTouch(ctx, tx, dbq.ContactTouchParams{OrganizationID: org, Ids: ids}); err != nil {
					return err
				}
			}
			changes = append(changes, "categories")
		}
		added, err := h.gate.Add(ctx, tx, p, adds, time.Now())
		if err != nil {
			return err
		}
		held = added.Held
		if len(changes) > 0 {
			if err := activity.Record(ctx, tx, activity.Entry{ContactIDs: ids, UserID: actorUser(ctx), Type: "contact_updated",
				Metadata: map[string]any{"fields": changes}}); err != nil {
				return err
			}
			if _, err := h.outbox.Emit(ctx, tx, events.ContactUpdated, map[string]any{"entity_id": row.ID, "changes": map[string]any{"fields": changes}}); err != nil {
				return err
			}
		}
		rows, err := contacts.ByIDs(ctx, tx, org, ids)
		if err != nil {
			return err
		}
		views, err := contactViews(ctx, tx, org, rows, nil)
		if err != nil {
			return err
		}
		out = views[0]
		return nil
	})
	if err != nil {
		return nil, err
	}
	if held != nil {
		return &api.ContactHeld{Contact: out, Approval: heldLeads(held)}, nil
	}
	return &out, nil
}

// ContactsDelete deletes one contact with its links, notes and activities; sent history keeps its rows
// without the contact.
func (h *Contacts) ContactsDelete(ctx context.Context, params api.ContactsDeleteParams) error {
	org, err := tenantCaller(ctx)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		email, err := h.queries.ContactDelete(ctx, tx, dbq.ContactDeleteParams{OrganizationID: org, ID: params.ID})
		if errors.Is(err, pgx.ErrNoRows) {
			return errContactNotFound
		}
		if err != nil {
			return fmt.Errorf("delete contact: %w", err)
		}
		if _, err := h.outbox.Emit(ctx, tx, events.ContactDeleted, map[string]any{"entity_id": params.ID, "contact_email": email}); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "contacts.deleted", EntityType: audit.EntityContact, EntityID: params.ID.String(),
			Metadata: map[string]any{"count": 1}})
	})
}
