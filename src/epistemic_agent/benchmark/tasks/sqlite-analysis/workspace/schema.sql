-- shop.db: the coffee shop's web orders, first half of 2024 (an export of production).
-- Money is in integer euro cents. Times are shop local time, 'YYYY-MM-DD HH:MM:SS'.

CREATE TABLE customers (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    email       TEXT,
    country     TEXT,
    created_at  TEXT NOT NULL
);

CREATE TABLE products (
    id          INTEGER PRIMARY KEY,
    sku         TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    category    TEXT NOT NULL,
    price_cents INTEGER NOT NULL
);

CREATE TABLE orders (
    id          INTEGER PRIMARY KEY,
    customer_id INTEGER REFERENCES customers(id),
    ordered_at  TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('paid', 'shipped', 'delivered', 'cancelled'))
);

CREATE TABLE order_items (
    id               INTEGER PRIMARY KEY,
    order_id         INTEGER NOT NULL REFERENCES orders(id),
    product_id       INTEGER NOT NULL REFERENCES products(id),
    quantity         INTEGER NOT NULL CHECK (quantity > 0),
    unit_price_cents INTEGER NOT NULL
);

CREATE TABLE refunds (
    id           INTEGER PRIMARY KEY,
    order_id     INTEGER NOT NULL REFERENCES orders(id),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    refunded_at  TEXT NOT NULL,
    reason       TEXT
);

CREATE INDEX order_items_by_order ON order_items(order_id);
CREATE INDEX orders_by_customer ON orders(customer_id);
CREATE INDEX refunds_by_order ON refunds(order_id);
