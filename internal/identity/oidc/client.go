package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// maxResponseBytes bounds what is read from a provider: discovery documents, key sets and token answers are
// a few kilobytes.
const maxResponseBytes = 1 << 20

// NewHTTPClient returns the client provider calls go through. It times out after 10 seconds, follows no
// redirects (a provider's endpoints are named exactly by its discovery document) and refuses to connect to
// link-local, multicast or unspecified addresses, where cloud metadata services and other things no identity
// provider lives are reached. Loopback and private addresses stay reachable: a self-hosted IdP is often on the
// same host or network, and the issuer is the operator's choice.
func NewHTTPClient() *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Control: refuseSpecialAddress}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          10,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// refuseSpecialAddress runs after name resolution, so a host name resolving to a forbidden address is refused
// too.
func refuseSpecialAddress(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return err
	}
	ip = ip.Unmap()
	if ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() ||
		ip.IsMulticast() || ip.IsUnspecified() {
		return fmt.Errorf("oidc: refusing to connect to %s", ip)
	}
	return nil
}

// checkEndpoint accepts an https URL, or an http one on a loopback host (development and tests), without
// credentials or a fragment.
func checkEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" {
		return nil, fmt.Errorf("%q is not an absolute URL without credentials", raw)
	}
	switch u.Scheme {
	case "https":
		return u, nil
	case "http":
		if isLoopback(u.Hostname()) {
			return u, nil
		}
	}
	return nil, fmt.Errorf("%q must use https (plain http only on a loopback host)", raw)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// getJSON fetches url and decodes its JSON answer into out; any failure is ErrUnavailable.
func getJSON(ctx context.Context, client *http.Client, rawURL string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: GET %s: %v", ErrUnavailable, rawURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: GET %s answered %d", ErrUnavailable, rawURL, resp.StatusCode)
	}
	if err := decodeBody(resp.Body, out); err != nil {
		return fmt.Errorf("%w: GET %s: %v", ErrUnavailable, rawURL, err)
	}
	return nil
}

func decodeBody(body io.Reader, out any) error {
	data, err := io.ReadAll(io.LimitReader(body, maxResponseBytes+1))
	if err != nil {
		return err
	}
	if len(data) > maxResponseBytes {
		return errors.New("answer too large")
	}
	return json.Unmarshal(data, out)
}
