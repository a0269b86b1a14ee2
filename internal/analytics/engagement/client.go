package engagement

import (
	"strings"

	useragent "github.com/medama-io/go-useragent"
	"github.com/medama-io/go-useragent/agents"
)

// The device keys the report shows; the empty key is unknown.
const (
	DeviceDesktop = "desktop"
	DeviceMobile  = "mobile"
	DeviceTablet  = "tablet"
)

// The mail clients the rules below recognise before the browser parser is asked.
const (
	ClientGmail       = "Gmail"
	ClientYahooMail   = "Yahoo Mail"
	ClientOutlook     = "Outlook"
	ClientThunderbird = "Thunderbird"
	ClientAppleMail   = "Apple Mail"
)

// mailClient is one rule: a user agent containing marker is client. proxy is true for image proxies, which
// fetch for the reader and hide the reader's device (the device is then unknown); device, when set, is the
// device a client's own user agent implies.
type mailClient struct {
	marker, client string
	proxy          bool
	device         string
}

// mailClients are tried in order; the first marker found wins. Mail clients are not browsers, and the
// browser parser would call them by the engine they embed (Gmail's proxy says Firefox, Thunderbird says
// nothing), so they are named here.
var mailClients = []mailClient{
	{marker: "GoogleImageProxy", client: ClientGmail, proxy: true},
	{marker: "YahooMailProxy", client: ClientYahooMail, proxy: true},
	{marker: "Outlook-iOS", client: ClientOutlook, device: DeviceMobile},
	{marker: "Outlook-Android", client: ClientOutlook, device: DeviceMobile},
	{marker: "Microsoft Outlook", client: ClientOutlook},
	{marker: "ms-office", client: ClientOutlook},
	{marker: "Thunderbird/", client: ClientThunderbird},
}

// parser is the browser and device parser; it is built once from its embedded data and is safe for
// concurrent use.
var parser = useragent.NewParser()

// Classify names the mail client and device of a user agent ("" for unknown). Apple Mail (macOS and iOS)
// sends WebKit's user agent without Safari's product token; any other client is the browser the parser
// recognises (web mail read in Chrome counts as Chrome).
func Classify(ua string) (client, device string) {
	parsed := parser.Parse(ua)
	device = deviceOf(parsed.Device())
	for _, m := range mailClients {
		if strings.Contains(ua, m.marker) {
			switch {
			case m.proxy:
				device = ""
			case m.device != "":
				device = m.device
			}
			return m.client, device
		}
	}
	if appleMail(ua) {
		return ClientAppleMail, device
	}
	return string(parsed.Browser()), device
}

// appleMail reports whether ua is Apple Mail's: WebKit on a Mac, iPhone or iPad, with no browser product
// after it (Safari, Chrome on iOS and the other browsers all add one).
func appleMail(ua string) bool {
	if !strings.Contains(ua, "AppleWebKit/") || !(strings.Contains(ua, "Macintosh") || strings.Contains(ua, "iPhone") ||
		strings.Contains(ua, "iPad")) {
		return false
	}
	for _, product := range []string{"Safari/", "Version/", "CriOS/", "FxiOS/", "EdgiOS/", "Chrome/", "Firefox/", "OPR/"} {
		if strings.Contains(ua, product) {
			return false
		}
	}
	return true
}

// deviceOf maps the parser's device to the report's keys; TV, bot and unknown are unknown.
func deviceOf(d agents.Device) string {
	switch d {
	case agents.DeviceDesktop:
		return DeviceDesktop
	case agents.DeviceMobile:
		return DeviceMobile
	case agents.DeviceTablet:
		return DeviceTablet
	}
	return ""
}
