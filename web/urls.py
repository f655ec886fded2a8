"""URL routes of the web UI and the API."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from web import throttles
from web.accounts import notification_views as notify_views
from web.accounts import team_views as views_team
from web.accounts import views as views_account
from web.api import audit as api_audit
from web.api import cases as api
from web.api import resolutions as api_resolutions
from web.api import shares as api_shares
from web.api import trends as api_trends
from web.api import upload_links as api_upload_links
from web.cases import resolution_views, views
from web.sharing import views as share_views
from web.trends import views as trends_views
from web.uploads import views as upload_views

urlpatterns = [
    path("", views.case_list, name="case-list"),
    path("cases/", views.case_list),
    path("cases/new/", views.case_new, name="case-new"),
    path("cases/create/", views.case_create, name="case-create"),
    path("cases/<int:case_id>/", views.case_detail, name="case-detail"),
    path("cases/<int:case_id>/status.json", views.case_status, name="case-status"),
    path("cases/<int:case_id>/timeline.json", views.case_timeline, name="case-timeline"),
    path("cases/<int:case_id>/moment.json", views.case_moment, name="case-moment"),
    path("cases/<int:case_id>/queries.json", views.case_queries, name="case-queries"),
    path(
        "cases/<int:case_id>/findings.<str:fmt>",
        views.case_findings_export,
        name="case-findings-export",
    ),
    path("cases/<int:case_id>/series.csv", views.case_series_csv, name="case-series-csv"),
    path("cases/<int:case_id>/reanalyze/", views.case_reanalyze, name="case-reanalyze"),
    path("cases/<int:case_id>/bundle/", views.case_upload, name="case-upload"),
    path("cases/<int:case_id>/bundles/", views.case_add_bundle, name="case-add-bundle"),
    path("cases/<int:case_id>/details/", views.case_details, name="case-details"),
    path("cases/<int:case_id>/compare/", views.case_compare, name="case-compare"),
    path("cases/<int:case_id>/compare.json", views.case_compare_json, name="case-compare-json"),
    path("collect.sh", views.collector, name="collector"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("settings/", views_account.user_settings, name="user-settings"),
    path("settings/tokens/", views_account.api_token_create, name="api-token-create"),
    path("settings/tokens/<int:token_id>/revoke/", views_account.api_token_revoke, name="api-token-revoke"),
    path(
        "settings/invitations/<int:invitation_id>/accept/",
        views_account.invitation_accept,
        name="invitation-accept",
    ),
    path(
        "settings/invitations/<int:invitation_id>/decline/",
        views_account.invitation_decline,
        name="invitation-decline",
    ),
    # Password change and reset by e-mail (Django's views; templates/registration/); the reset
    # request throttled per address and per account (web/throttles.py).
    path(
        "accounts/password_reset/",
        auth_views.PasswordResetView.as_view(form_class=throttles.ThrottledPasswordResetForm),
        name="password_reset",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/cases/", api.case_list_create_api, name="api-cases"),
    path("api/cases/<int:case_id>/", api.case_report_api, name="api-case"),
    path("api/cases/<int:case_id>/status/", api.case_status_api, name="api-case-status"),
    path("api/cases/<int:case_id>/bundles/", api.case_bundle_add_api, name="api-case-bundles"),
    path("api/cases/<int:case_id>/findings/", api.case_findings_api, name="api-case-findings"),
    path("api/cases/<int:case_id>/series/", api.case_series_api, name="api-case-series"),
    path("api/cases/<int:case_id>/moment/", api.case_moment_api, name="api-case-moment"),
    path("api/cases/<int:case_id>/queries/", api.case_queries_api, name="api-case-queries"),
    path("api/compare/", api.case_compare_api, name="api-compare"),
    path("api/cases/<int:case_id>/shares/", api_shares.share_list_create_api, name="api-shares"),
    path("api/cases/<int:case_id>/shares/<int:share_id>/", api_shares.share_detail_api, name="api-share"),
    *share_views.urlpatterns(),
    *resolution_views.urlpatterns(),
    *api_resolutions.urlpatterns(),
    *upload_views.urlpatterns(),
    *api_upload_links.urlpatterns(),
    *views_team.urlpatterns(),
    *notify_views.urlpatterns(),
    *api_audit.urlpatterns(),
    *api_trends.urlpatterns(),
    *trends_views.urlpatterns(),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="api/docs.html"),
        name="api-docs",
    ),
    re_path(r"^api/(?P<rest>[\s\S]*)\Z", api.api_not_found),  # last: a JSON 404 for any other API path
]
