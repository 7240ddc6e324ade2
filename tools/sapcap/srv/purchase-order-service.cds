using cardflow.po as db from '../db/schema';

// Served at /odata/v4/purchase-order (V4) and /odata/v2/purchase-order
// (V2, through @cap-js-community/odata-v2-adapter).
service PurchaseOrderService @(path: 'purchase-order', requires: 'authenticated-user') {
  @cds.redirection.target
  entity PurchaseOrders     as projection on db.PurchaseOrders;
  entity PurchaseOrderItems as projection on db.PurchaseOrderItems;

  // The same orders, three to a page: server-driven paging
  // (@odata.nextLink on V4, __next on V2).
  @cds.query.limit: { default: 3, max: 3 }
  entity PagedPurchaseOrders as projection on db.PurchaseOrders;
}
