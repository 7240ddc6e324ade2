namespace cardflow.po;

// A purchase order with its items, the shape of S/4HANA's A_PurchaseOrder
// reduced to what the ERP step's tests read and change.
entity PurchaseOrders {
  key ID       : String(10);
      supplier : String(40) @mandatory;
      amount   : Decimal(15, 2) @assert.range: [0, 1000000];
      currency : String(3);
      status   : String(20) enum { Open; Approved; Rejected };
      items    : Composition of many PurchaseOrderItems on items.order = $self;
}

entity PurchaseOrderItems {
  key order    : Association to PurchaseOrders;
  key itemNo   : Integer;
      material : String(40);
      quantity : Integer;
      price    : Decimal(15, 2);
}
