package server

import (
	"net/http"
	"slices"

	"github.com/tablestore/tablestore/edm"
)

// serviceVersions are Azure Storage's published service versions from
// 2015-04-05 (the first whose SAS string-to-sign this server computes,
// with signedIP and signedProtocol) on, oldest first. A SAS's sv must be
// one of them; an x-ms-version header may name any of them or of
// olderVersions (and is echoed as sent), and naming another is 400
// InvalidHeaderValue. Add each new version Azure publishes here, and only
// here.
var serviceVersions = []string{
	"2015-04-05", "2015-07-08", "2015-12-11", "2016-05-31",
	"2017-04-17", "2017-07-29", "2017-11-09", "2018-03-28",
	"2018-11-09", "2019-02-02", "2019-07-07", "2019-10-10",
	"2019-12-12", "2020-02-10", "2020-04-08", "2020-06-12",
	"2020-08-04", "2020-10-02", "2020-12-06", "2021-02-12",
	"2021-04-10", "2021-06-08", "2021-08-06", "2021-10-04",
	"2021-12-02", "2022-11-02", "2023-01-03", "2023-05-03",
	"2023-08-03", "2023-11-03", "2024-02-04", "2024-05-04",
	"2024-08-04", "2024-11-04", "2025-01-05", "2025-05-05",
	"2025-07-05", "2025-11-05", "2026-02-06", "2026-04-06",
	"2026-06-06",
}

// olderVersions are the published service versions before
// serviceVersions, which an x-ms-version header may still name (Azure
// keeps serving them) but a SAS's sv may not.
var olderVersions = []string{
	"2009-04-14", "2009-07-17", "2009-09-19", "2011-08-18",
	"2012-02-12", "2013-08-15", "2014-02-14", "2015-02-21",
}

// knownVersion reports whether v is one of serviceVersions.
var knownVersion = versionSet(serviceVersions)

// headerVersion reports whether v is a version an x-ms-version header
// may name: one of olderVersions or serviceVersions.
var headerVersion = versionSet(append(slices.Clone(olderVersions), serviceVersions...))

func versionSet(vs []string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

// errBadVersion is Azure's answer to an x-ms-version header that names no
// published version.
var errBadVersion = apiError(http.StatusBadRequest, edm.CodeInvalidHeaderValue, "The value for one of the HTTP headers is not in the correct format.")

// checkVersion refuses an x-ms-version header that names no published
// version; a request without one is served at the default version.
func (q *request) checkVersion() error {
	if v := q.r.Header.Get("X-Ms-Version"); v != "" && !headerVersion[v] {
		return errBadVersion
	}
	return nil
}
