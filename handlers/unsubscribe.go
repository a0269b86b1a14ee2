package handlers

import (
	"bytes"
	"context"
	"strings"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/unsubscribe"
)

// Unsubscribe serves the unsubscribe link of campaign messages (GET and POST /u/{token}, at the root): the
// confirmation page, and the POST that mailbox providers' one-click requests and the page's form send.
type Unsubscribe struct {
	service *unsubscribe.Service
}

// NewUnsubscribe builds the unsubscribe endpoints over the service that applies the requests.
func NewUnsubscribe(service *unsubscribe.Service) *Unsubscribe {
	return &Unsubscribe{service: service}
}

// TrackingUnsubscribePage shows the page naming the address, with a button that posts back to the link;
// loading it changes nothing. A token that is not honoured is a 404.
func (h *Unsubscribe) TrackingUnsubscribePage(ctx context.Context, params api.TrackingUnsubscribePageParams) (*api.TrackingUnsubscribePageOKHeaders, error) {
	r, err := h.service.Recipient(ctx, params.Token)
	if err != nil {
		return nil, err
	}
	return &api.TrackingUnsubscribePageOKHeaders{CacheControl: noStore, ContentSecurityPolicy: unsubscribe.PageSecurityPolicy,
		Response: api.TrackingUnsubscribePageOK{Data: bytes.NewReader(unsubscribe.ConfirmPage(r))}}, nil
}

// TrackingUnsubscribe unsubscribes the link's recipient before it answers: a one-click request
// (List-Unsubscribe=One-Click, url-encoded or multipart) is answered 204, any other POST (the page's form, an
// empty body) 200 with a page saying it is done. A repeat is answered the same way.
func (h *Unsubscribe) TrackingUnsubscribe(ctx context.Context, req api.TrackingUnsubscribeReq, params api.TrackingUnsubscribeParams) (api.TrackingUnsubscribeRes, error) {
	source := unsubscribe.SourceLink
	if oneClick(req) {
		source = unsubscribe.SourceOneClick
	}
	res, err := h.service.Unsubscribe(ctx, params.Token, source)
	if err != nil {
		return nil, err
	}
	if source == unsubscribe.SourceOneClick {
		return &api.TrackingUnsubscribeNoContent{}, nil
	}
	return &api.TrackingUnsubscribeOKHeaders{CacheControl: noStore, ContentSecurityPolicy: unsubscribe.PageSecurityPolicy,
		Response: api.TrackingUnsubscribeOK{Data: bytes.NewReader(unsubscribe.DonePage(res.Recipient))}}, nil
}

// oneClick reports whether the body is an RFC 8058 one-click request: the field List-Unsubscribe with the
// value One-Click, in either form encoding.
func oneClick(req api.TrackingUnsubscribeReq) bool {
	var field api.OptString
	switch f := req.(type) {
	case *api.UnsubscribeForm:
		field = f.ListMinusUnsubscribe
	case *api.UnsubscribeFormMultipart:
		field = f.ListMinusUnsubscribe
	}
	return field.Set && strings.EqualFold(strings.TrimSpace(field.Value), "One-Click")
}
