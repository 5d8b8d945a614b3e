"""The OpenAPI document served at /api/v1/openapi.json covers the API as routed."""
def test_the_openapi_document_names_every_api_path(client):
    from django.urls import get_resolver

    document = client.get("/api/v1/openapi.json").json()
    assert document["openapi"].startswith("3.")
    routes = {
        "/api/v1/" + str(p.pattern).replace("<str:username>", "{username}").replace("<board_id:board_id>", "{board_id}")
        for api in get_resolver().url_patterns if str(api.pattern) == "api/v1/"
        for p in api.url_patterns
    }
    routes.discard("/api/v1/openapi.json")
    assert routes == set(document["paths"])
    assert "Doc" in document["components"]["schemas"]
