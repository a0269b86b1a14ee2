package apps

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

var queries = dbq.New()

// SecretPrefix starts every connection signing secret, so people and secret scanners recognise one.
const SecretPrefix = "appsec_"

// MaxName is the longest connection name, in characters.
const MaxName = 100

// NewSecret mints a signing secret: the prefix and 256 random bits.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms.
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// secretContext binds a sealed secret to its connection, so a sealed value copied to another row does not open.
func secretContext(id uuid.UUID) string { return "app_connection:" + id.String() }

// OpenSecret decrypts a connection's stored secret.
func OpenSecret(k *seal.Keyring, c dbq.AppConnection) (string, error) {
	b, err := k.Open(c.SecretSealed, secretContext(c.ID))
	if err != nil {
		return "", fmt.Errorf("open app connection secret: %w", err)
	}
	return string(b), nil
}

// Store keeps the organization's app connections: names and base URLs checked (URLs through the egress
// rules, outside any transaction), secrets sealed, every change in the audit log without its secret.
type Store struct {
	pool    *pgxpool.Pool
	keyring *seal.Keyring
	egress  egress.Options
	client  *Client
}

// NewStore builds the store; opts are the deployment's egress rules, client sends the connection tests' pings.
func NewStore(pool *pgxpool.Pool, keyring *seal.Keyring, opts egress.Options, client *Client) *Store {
	return &Store{pool: pool, keyring: keyring, egress: opts, client: client}
}

// Fields are a connection's settings as a create or an update sends them; nil leaves one as it is (an update).
type Fields struct {
	Name, BaseURL *string
}

func notFound() error {
	return apierror.NotFound("app_connection_not_found", "App connection not found.")
}

// CheckName trims a name and checks it: 1 to MaxName characters on one line.
func CheckName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n == 0 || n > MaxName || strings.ContainsFunc(name, unicode.IsControl) {
		return "", apierror.BadRequest("invalid_name", fmt.Sprintf("name must be 1 to %d characters on one line.", MaxName))
	}
	return name, nil
}

// CheckBaseURL checks a base URL: https, no credentials, through the egress rules (its host resolves to
// public addresses only); the query and fragment are dropped. It answers the URL as stored.
func (s *Store) CheckBaseURL(ctx context.Context, raw string) (string, error) {
	bad := func(rule string) error {
		return apierror.BadRequest("invalid_base_url", "base_url "+rule).
			WithFix("Use the https URL of your app, such as https://app.example.com/outflow, without credentials.")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return "", bad("must be an absolute https URL.")
	case u.User != nil:
		return "", bad("must not carry credentials (user:password@); the app verifies the request's signature instead.")
	case !strings.EqualFold(u.Scheme, "https"):
		return "", bad("must use https.")
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	checked, err := egress.ValidateURL(ctx, u.String(), s.egress)
	var refused *egress.Error
	if errors.As(err, &refused) {
		return "", bad("is not allowed: " + refused.Message + ".")
	}
	if err != nil {
		return "", err
	}
	return checked.String(), nil
}

// check applies the rules to what f sets.
func (s *Store) check(ctx context.Context, f Fields) (Fields, error) {
	var out Fields
	if f.Name != nil {
		name, err := CheckName(*f.Name)
		if err != nil {
			return out, err
		}
		out.Name = &name
	}
	if f.BaseURL != nil {
		u, err := s.CheckBaseURL(ctx, *f.BaseURL)
		if err != nil {
			return out, err
		}
		out.BaseURL = &u
	}
	return out, nil
}

// nameTaken turns the unique name index's refusal into 409 app_connection_name_taken.
func nameTaken(err error, name string) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "23505" {
		return apierror.Conflict("app_connection_name_taken",
			fmt.Sprintf("An app connection named %q already exists in this workspace (names are compared ignoring case).", name)).
			WithFix("Choose another name, or update the existing connection.")
	}
	return err
}

// auditOf is what an audit entry keeps of a connection: never its secret.
func auditOf(c dbq.AppConnection) map[string]any {
	return map[string]any{"name": c.Name, "base_url": c.BaseUrl}
}

// List answers the organization's connections, newest first.
func (s *Store) List(ctx context.Context, org uuid.UUID) ([]dbq.AppConnection, error) {
	var rows []dbq.AppConnection
	err := db.WithOrgTx(ctx, s.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		rows, err = queries.AppConnectionList(ctx, tx, org)
		return err
	})
	return rows, err
}

// Get answers one connection (404 app_connection_not_found).
func (s *Store) Get(ctx context.Context, org, id uuid.UUID) (dbq.AppConnection, error) {
	var row dbq.AppConnection
	err := db.WithOrgTx(ctx, s.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		row, err = queries.AppConnectionGet(ctx, tx, dbq.AppConnectionGetParams{OrganizationID: org, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound()
		}
		return err
	})
	return row, err
}

// Create registers a connection (name and base URL both required) and answers it with its secret, which is
// never shown again.
func (s *Store) Create(ctx context.Context, org uuid.UUID, f Fields) (dbq.AppConnection, string, error) {
	if f.Name == nil || f.BaseURL == nil {
		return dbq.AppConnection{}, "", apierror.BadRequest("invalid_body", "name and base_url are required.")
	}
	f, err := s.check(ctx, f)
	if err != nil {
		return dbq.AppConnection{}, "", err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return dbq.AppConnection{}, "", err
	}
	secret := NewSecret()
	var row dbq.AppConnection
	err = db.WithOrgTx(ctx, s.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err = queries.AppConnectionInsert(ctx, tx, dbq.AppConnectionInsertParams{OrganizationID: org, ID: id,
			Name: *f.Name, BaseUrl: *f.BaseURL, SecretSealed: s.keyring.Seal([]byte(secret), secretContext(id))})
		if err != nil {
			return nameTaken(err, *f.Name)
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "app_connection.created",
			EntityType: audit.EntityAppConnection, EntityID: id.String(), Metadata: auditOf(row)})
	})
	return row, secret, err
}

// Update changes what f sets; the secret stays.
func (s *Store) Update(ctx context.Context, org, id uuid.UUID, f Fields) (dbq.AppConnection, error) {
	f, err := s.check(ctx, f)
	if err != nil {
		return dbq.AppConnection{}, err
	}
	var row dbq.AppConnection
	err = db.WithOrgTx(ctx, s.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := queries.AppConnectionGetForUpdate(ctx, tx, dbq.AppConnectionGetForUpdateParams{OrganizationID: org, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound()
		}
		if err != nil {
			return err
		}
		p := dbq.AppConnectionUpdateParams{OrganizationID: org, ID: id, Name: cur.Name, BaseUrl: cur.BaseUrl}
		if f.Name != nil {
			p.Name = *f.Name
		}
		if f.BaseURL != nil {
			p.BaseUrl = *f.BaseURL
		}
		if row, err = queries.AppConnectionUpdate(ctx, tx, p); err != nil {
			return nameTaken(err, p.Name)
		}
		meta := auditOf(row)
		meta["previous"] = auditOf(cur)
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "app_connection.updated",
			EntityType: audit.EntityAppConnection, EntityID: id.String(), Metadata: meta})
	})
	return row, err
}

// Delete removes a connection no campaign step names (409 app_connection_in_use otherwise).
func (s *Store) Delete(ctx context.Context, org, id uuid.UUID) error {
	return db.WithOrgTx(ctx, s.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := queries.AppConnectionGetForUpdate(ctx, tx, dbq.AppConnectionGetForUpdateParams{OrganizationID: org, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound()
		}
		if err != nil {
			return err
		}
		inUse, err := queries.AppConnectionInUse(ctx, tx, dbq.AppConnectionInUseParams{OrganizationID: org, ID: id.String()})
		if err != nil {
			return err
		}
		if inUse {
			return apierror.Conflict("app_connection_in_use",
				fmt.Sprintf("App connection %q is called by a campaign's app_action step, so it cannot be deleted.", cur.Name)).
				WithFix("Change or delete the app_action steps that name it (their action.app_connection_id), then delete it.")
		}
		if err := queries.AppConnectionDelete(ctx, tx, dbq.AppConnectionDeleteParams{OrganizationID: org, ID: id}); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "app_connection.deleted",
			EntityType: audit.EntityAppConnection, EntityID: id.String(), Metadata: auditOf(cur)})
	})
}

// RotateSecret replaces a connection's secret and answers the new one: from this commit on, calls are signed
// with it alone.
func (s *Store) RotateSecret(ctx context.Context, org, id uuid.UUID) (string, error) {
	secret := NewSecret()
	err := db.WithOrgTx(ctx, s.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err := queries.AppConnectionSetSecret(ctx, tx, dbq.AppConnectionSetSecretParams{OrganizationID: org, ID: id,
			SecretSealed: s.keyring.Seal([]byte(secret), secretContext(id))})
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound()
		}
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionRotateSecret, Event: "app_connection.secret_rotated",
			EntityType: audit.EntityAppConnection, EntityID: id.String(), Metadata: auditOf(row)})
	})
	return secret, err
}

// Test sends the connection's signed app.ping at now and answers what it found (a 404 only for an unknown
// connection; every failure of the app is in the Probe).
func (s *Store) Test(ctx context.Context, org, id uuid.UUID, now time.Time) (Probe, error) {
	c, err := s.Get(ctx, org, id)
	if err != nil {
		return Probe{}, err
	}
	secret, err := OpenSecret(s.keyring, c)
	if err != nil {
		return Probe{}, err
	}
	return s.client.Ping(ctx, c.BaseUrl, secret, now)
}
