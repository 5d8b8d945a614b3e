from django.http import JsonResponse

from ugcsite.http import error_response


def health(request):
    """``GET /api/v1/health``: the process answers (for load balancers, and the benchmark's
    trivial view: the framework's own ceiling on this stack). No caller, so no token is read."""
    if request.method != "GET":
        return error_response(405, f"{request.method} is not allowed here; use GET.", headers={"Allow": "GET"})
    return JsonResponse({"ok": True})
