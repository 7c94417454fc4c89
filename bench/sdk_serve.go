package main

import (
	"context"
	"errors"
)

// sdkServeArg makes this program serve tablestore's REST API for the sdk
// mode's parent process.
const sdkServeArg = "-sdk-serve"

func runSDKServe(context.Context) error {
	return errors.New("bench: tablestore's REST server is not in this tree yet; use -servers=azurite or -tablestore-bin")
}
