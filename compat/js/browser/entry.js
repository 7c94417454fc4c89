// The browser build of @azure/data-tables, bundled by esbuild for the
// browser test (compat/browser_test.go): the page's script finds the SDK
// on window.AzureTables.
import {
  AzureSASCredential,
  TableClient,
  TableServiceClient,
  TableTransaction,
  odata,
} from "@azure/data-tables";

window.AzureTables = { AzureSASCredential, TableClient, TableServiceClient, TableTransaction, odata };
