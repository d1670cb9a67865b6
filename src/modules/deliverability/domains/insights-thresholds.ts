// The numbers behind domain insights, in one place, with where they come from.
//
// Complaints: Gmail's and Yahoo's sender requirements (February 2024) ask
// senders to keep the spam rate reported in Postmaster Tools below 0.1% and
// never to reach 0.3%.
// Bounces: Amazon SES puts an account under review at a 5% bounce rate and
// recommends staying under 2%; Postmark and SendGrid give similar guidance
// (a few percent is already a list-quality problem).
// DMARC: Gmail and Yahoo require a DMARC record (p=none is enough) for bulk
// senders; enforcing it (quarantine/reject) is the recommended end state.

export const COMPLAINT_RATE_WATCH = 0.001;
export const COMPLAINT_RATE_AT_RISK = 0.003;
export const BOUNCE_RATE_WATCH = 0.02;
export const BOUNCE_RATE_AT_RISK = 0.05;
