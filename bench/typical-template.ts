// The "typical transactional template" of issue 20's speed targets: 20 placeholders, one {{#each}} over
// 10 items, two {{#if}}, two filters; an order receipt with an html and a text part.
export const TYPICAL_TEMPLATE = {
  id: 'bench-receipt',
  name: 'Order receipt',
  subject: 'Your order {{ order.number }} from {{ shop }}',
  html: `<!doctype html><html><body style="font-family:sans-serif">
<h1>Thanks for your order, {{ customer.first_name | capitalize }}!</h1>
<p>Order <b>{{ order.number }}</b> placed on {{ order.date }} will ship to:</p>
<p>{{ customer.first_name }} {{ customer.last_name }}<br>{{ address.line1 }}<br>{{ address.postcode }} {{ address.city }}<br>{{ address.country }}</p>
<table width="100%" cellpadding="4">
<tr><th align="left">Item</th><th align="right">Qty</th><th align="right">Price</th></tr>
{{#each items as item}}<tr><td>{{ item.name }}</td><td align="right">{{ item.qty }}</td><td align="right">{{ item.price }}</td></tr>
{{/each}}</table>
<p>Subtotal {{ order.subtotal }} · Shipping {{ order.shipping }} · <b>Total {{ order.total | currency:'EUR' }}</b></p>
{{#if coupon}}<p>Coupon {{ coupon }} saved you {{ order.discount }}.</p>{{/if}}
{{#if order.gift}}<p>This order is a gift: prices are hidden on the packing slip.</p>{{/if}}
<p><a href="{{ links.order }}">See your order</a> · <a href="{{ links.help }}">Help</a></p>
<p>{{ shop }} · {{ support_email }}</p>
</body></html>`,
  text: `Thanks for your order, {{ customer.first_name }}!
Order {{ order.number }}, total {{ order.total }}.
See your order: {{ links.order }}`,
  variables: {
    shop: {},
    support_email: {},
    customer: { type: 'object' },
    address: { type: 'object' },
    order: { type: 'object' },
    items: { type: 'array' },
    coupon: { required: false },
    links: { type: 'object' },
  },
};

export const TYPICAL_VARIABLES = {
  shop: 'Northwind Coffee',
  support_email: 'help@northwind.example',
  customer: { first_name: 'ada', last_name: 'Lovelace' },
  address: { line1: '12 Harbour Lane', postcode: 'BS1 4RN', city: 'Bristol', country: 'United Kingdom' },
  order: {
    number: 'NW-20931',
    date: '2026-11-25',
    subtotal: '€71.40',
    shipping: '€4.90',
    total: 76.3,
    discount: '€5.00',
    gift: false,
  },
  items: Array.from({ length: 10 }, (_, i) => ({
    name: `Single origin coffee no. ${i + 1}, 250 g`,
    qty: 1 + (i % 3),
    price: `€${(7 + i * 0.5).toFixed(2)}`,
  })),
  coupon: 'WELCOME5',
  links: { order: 'https://northwind.example/orders/NW-20931', help: 'https://northwind.example/help' },
};
