package handlers

import (
	"bytes"
	"context"
	"net/netip"
	"time"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/analytics/engagement"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// Tracking serves the open pixel and the click redirect on the tracking host. Both validate their token in
// memory and hand the event to the batcher; neither waits on the database, so a recipient's image or link is
// never slower for a busy database.
type Tracking struct {
	signer   *tracking.Signer
	networks *tracking.Networks
	hasher   *tracking.IPHasher
	events   *tracking.Batcher
	now      func() time.Time
	geo      *engagement.Geo
}

// NewTracking builds the tracking endpoints from the token signer, the network lists, the address hasher,
// the event batcher the composition root owns (and closes on shutdown), the clock events are stamped with and
// the geo database readers' countries come from (nil: every country unknown).
func NewTracking(signer *tracking.Signer, networks *tracking.Networks, hasher *tracking.IPHasher, events *tracking.Batcher,
	now func() time.Time, geo *engagement.Geo) *Tracking {
	return &Tracking{signer: signer, networks: networks, hasher: hasher, events: events, now: now, geo: geo}
}

// pixelGIF is the 1x1 transparent GIF every open pixel request gets, known token or not.
var pixelGIF = []byte{
	'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x21, 0xf9, 4, 1, 0, 0, 0, 0,
	0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 1, 0,
	0x3b,
}

// noStore keeps proxies and mail clients from caching the pixel or the redirect, so every open and click
// reaches the tracking host.
const noStore = "no-store"

// TrackingOpenPixel answers the same no-store GIF to every request and records an open when the token is a
// valid open token; a bad token records nothing and the answer does not say so.
func (t *Tracking) TrackingOpenPixel(ctx context.Context, params api.TrackingOpenPixelParams) (*api.TrackingOpenPixelOKHeaders, error) {
	if tok, err := t.signer.Parse(params.Token, tracking.KindOpen); err == nil {
		t.events.Add(t.received(ctx, tok))
	}
	return &api.TrackingOpenPixelOKHeaders{CacheControl: noStore, Response: api.TrackingOpenPixelOK{Data: bytes.NewReader(pixelGIF)}}, nil
}

// TrackingClickRedirect records the click and redirects (302, no-store) to the link's original URL, which the
// token itself carries; a token that is forged, truncated or not a click token is a 404. Unless the request
// comes from a recognised or probable scanner network (tracking.TicketAllowed), the URL carries the click
// identification ticket as its ofclid query parameter, and the event records that it did.
func (t *Tracking) TrackingClickRedirect(ctx context.Context, params api.TrackingClickRedirectParams) (*api.TrackingClickRedirectFound, error) {
	tok, err := t.signer.Parse(params.Token, tracking.KindClick)
	if err != nil {
		return nil, apierror.NotFound("link_not_found",
			"This link is not a valid tracked link: it may have been cut short or altered. Open the link from the original email again.")
	}
	e := t.received(ctx, tok)
	location := tok.URL
	if tracking.TicketAllowed(e.Source) {
		ticket, err := t.signer.Sign(tracking.Token{Kind: tracking.KindTicket, OrganizationID: tok.OrganizationID,
			TaskID: tok.TaskID, LinkIndex: tok.LinkIndex, At: e.At})
		if err == nil {
			location, e.TicketIssued = tracking.WithTicket(tok.URL, ticket), true
		}
	}
	t.events.Add(e)
	return &api.TrackingClickRedirectFound{CacheControl: noStore, Location: location}, nil
}

// received is the event the request makes: the token, the time, the user agent, the client address's keyed
// hash, network and country (never the address), and what the network lists say about them.
func (t *Tracking) received(ctx context.Context, tok tracking.Token) tracking.Received {
	info := reqctx.From(ctx)
	ip, _ := netip.ParseAddr(info.ClientIP)
	return tracking.Received{
		Token: tok, At: t.now(), UserAgent: info.UserAgent,
		IPHash: t.hasher.Hash(ip), SourceNetwork: tracking.SourceNetwork(ip), Country: t.geo.Country(ip),
		Source: t.networks.Lookup(ip, info.UserAgent),
	}
}
