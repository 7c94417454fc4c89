"""A small order book on azure-data-tables: the code test_orders.py tests."""
from azure.core import MatchConditions


def place_order(table, customer, order_id, total):
    table.create_entity({"PartitionKey": customer, "RowKey": order_id, "Total": total})


def orders_of(table, customer):
    return [e["RowKey"] for e in table.query_entities("PartitionKey eq @c", parameters={"c": customer})]


def spend_credit(customers, region, name, amount):
    """Takes amount from a customer's credit, refusing to go below zero,
    with optimistic concurrency on the entity's ETag (a merge)."""
    entity = customers.get_entity(region, name)
    if entity["Credit"] < amount:
        raise ValueError("not enough credit")
    entity["Credit"] -= amount
    customers.update_entity(entity, etag=entity.metadata["etag"], match_condition=MatchConditions.IfNotModified)
