package server

// serviceVersions are Azure Storage's published service versions from
// 2015-04-05 (the first whose SAS string-to-sign this server computes,
// with signedIP and signedProtocol) on, oldest first. A SAS's sv must be
// one of them; an x-ms-version header may name any of them (and is
// echoed as sent). Add each new version Azure publishes here, and only
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

// knownVersion reports whether v is one of serviceVersions.
var knownVersion = func() map[string]bool {
	m := make(map[string]bool, len(serviceVersions))
	for _, v := range serviceVersions {
		m[v] = true
	}
	return m
}()
