package reporttest

import (
	"net/http"
	"strconv"
	"time"
)

// PrimaryRateLimit is GitHub's answer when the hourly quota is spent until reset.
func PrimaryRateLimit(reset time.Time) Fault {
	return Fault{Status: http.StatusForbidden,
		Header: map[string]string{
			"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
			"X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10), "X-RateLimit-Resource": "core",
		},
		Body: `{"message":"API rate limit exceeded for user ID 1.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}`,
	}
}

// SecondaryRateLimit is GitHub's 403 for a secondary limit, with Retry-After in seconds.
func SecondaryRateLimit(retryAfter string) Fault {
	return Fault{Status: http.StatusForbidden,
		Header: map[string]string{"Retry-After": retryAfter},
		Body:   `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`,
	}
}

// TooManyRequests is GitHub's 429 with Retry-After in seconds.
func TooManyRequests(retryAfter string) Fault {
	return Fault{Status: http.StatusTooManyRequests,
		Header: map[string]string{"Retry-After": retryAfter},
		Body:   `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`,
	}
}

// ValidationFailed is GitHub's 422 for an issue body that is too long.
func ValidationFailed() Fault {
	return Fault{Status: http.StatusUnprocessableEntity,
		Body: `{"message":"Validation Failed","errors":[{"resource":"Issue","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}],"documentation_url":"https://docs.github.com/rest/issues/issues#create-an-issue"}`,
	}
}

// StatusFault is an answer of status with GitHub's error body quoting msg.
func StatusFault(status int, msg string) Fault {
	return Fault{Status: status, Body: `{"message":"` + msg + `","documentation_url":"https://docs.github.com/rest"}`}
}

// BadGateway is a proxy's 502, with an HTML body.
func BadGateway() Fault {
	return Fault{Status: http.StatusBadGateway, Body: "<html><body><h1>502 Bad Gateway</h1></body></html>"}
}
