// Package checks tells a person, before anything is sent, what would keep a campaign from sending well:
// validation (POST /campaigns/{id}/validate) lists every problem with a fix and stores nothing; preflight
// (POST /campaigns/{id}/preflight) runs the checks the campaign's preflight block turns on and stores a
// report. Load reads one snapshot of the campaign; Problems and Evaluate are pure functions of it.
//
// # Checks and problem codes
//
// Each check has a report key; the problems it finds have stable codes.
//
//   - steps (always): no_steps, no_email_step, one_time_multiple_emails, step_kind_unsupported (app_action
//     steps run when agent app actions ship; until then they stop a launch),
//     thread_reply_first_step (warning).
//   - content (always): step_empty_subject (the first email step, or one that does not reply in the thread),
//     step_empty_body (no plain body and no HTML body, or only HTML in a text_only campaign), template_error
//     (per part, with the parser's position), unresolved_variable (no fallback, and a custom field no contact
//     of the organization carries, or an App value no earlier app_action step captures).
//   - senders (always): no_senders.
//   - schedule_window (check_schedule_window): schedule_no_window, end_before_now.
//   - daily_limit (check_daily_limit): daily_limit_above_capacity (warning).
//   - tracking_domain (check_tracking_domain): tracking_domain_unverified (error when open or click
//     tracking is on, a warning otherwise).
//   - unsubscribe_header (check_unsubscribe_header): unsubscribe_header_off (warning).
//   - ab_variant_configured (check_ab_variant_configured): ab_variants_weights.
//   - content_score (check_content_score): content_score_low, below min_content_score.
//
// # Messages
//
// The messages checked and scored are each email step's own content and each active, non-control A/B
// variant's: a step-scoped variant at its step, a campaign-wide one at the first email step, a part a variant
// leaves empty being its step's. Controls carry the step's own content and inactive variants are not sent, so
// neither is checked as a message (ab_variants_weights still counts them).
//
// # Content score
//
// A message is rendered by the template engine for a sample contact (every standard field filled, spintax
// seed 0, no HTML part in a text_only campaign) and scored from 100 down; each rule's points saturate at its
// maximum and the score never goes below 0. The body's words are its plain part's, or the visible text of its
// HTML part when it has no plain part; a word is a whitespace-separated token with a letter or a digit.
//
//   - spam_words: 5 per trigger phrase found in the subject or body, at most 25. The phrases (whole words,
//     any case, punctuation but "%" read as a space): 100% free, act now, apply now, buy now, cash bonus,
//     click below, click here, congratulations, dear friend, double your, earn money, extra income, free
//     gift, guaranteed, limited time, lowest price, make money, no credit check, no obligation, once in a
//     lifetime, order now, risk free, special promotion, this is not spam, urgent, while supplies last,
//     winner.
//   - all_caps: words of three or more letters with no lower-case letter, as 50 x capitals / words of
//     subject and body (integer division), at most 15.
//   - exclamation_marks: 2 per "!" after the first in subject and body, at most 10.
//   - links: 5 per link after the third, at most 15.
//   - html_only: 10 for an HTML body without a plain-text part.
//   - too_short / too_long: 10 for a body under 20 words or over 500.
//   - image_only: 20 for an HTML body with an image and fewer than 10 words of visible text.
//   - url_shorteners: 10 per link to bit.ly, bl.ink, buff.ly, cutt.ly, goo.gl, is.gd, ow.ly, rb.gy,
//     rebrand.ly, shorturl.at, t.co, t.ly, tiny.cc or tinyurl.com, at most 20.
//
// The content score of a campaign is the lowest of its messages' scores, 0 when it has no email step.
//
// # Invariants
//
//   - Problems and Evaluate read nothing but their snapshot: the same snapshot gives the same problems, score
//     and report, and the clock is the snapshot's Now.
//   - Validation runs every check whatever the preflight block says and writes nothing.
//   - Preflight runs steps, content and senders always, and the other checks only when the block is enabled
//     and their switch is on. A report passes when no error-severity line failed: the content score check,
//     when on, fails below min_content_score. Its recommendations are the fixes of the failed warnings.
//   - Every problem carries a fix, and a step_id when it concerns one step.
//   - A stored report, its audit entry (verify, campaign.preflight) and its activity-log entry commit together.
package checks
