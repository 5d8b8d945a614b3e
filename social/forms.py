"""Forms of the account pages, with the rules of social.rules and the messages a person needs."""

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm
from django.core.validators import RegexValidator

from social import selectors
from social.rules import EMAIL_RE, EMAIL_WORDS, PASSWORD_LENGTH, USERNAME_MAX, USERNAME_RE

User = get_user_model()


class SignupForm(forms.Form):
    """The rules of POST /api/v1/users (docs/api.md), with the messages a person needs."""

    username = forms.RegexField(
        regex=USERNAME_RE,
        max_length=USERNAME_MAX,
        help_text="3–30 letters, digits or underscores.",
        error_messages={"invalid": "Use 3–30 letters (A–Z, a–z), digits or underscores, nothing else."},
        widget=forms.TextInput(attrs={"autocomplete": "username", "autocapitalize": "none", "spellcheck": "false"}),
    )
    password = forms.CharField(
        min_length=PASSWORD_LENGTH[0],
        max_length=PASSWORD_LENGTH[1],
        strip=False,
        help_text="8–128 characters.",
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    password_again = forms.CharField(
        label="Password again",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    email = forms.EmailField(
        required=False,
        validators=[RegexValidator(EMAIL_RE, f"Use {EMAIL_WORDS}.")],
        label="Email (optional)",
        help_text="Only to reset a forgotten password; we send a link to confirm it.",
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )

    def clean_username(self):
        username = self.cleaned_data["username"]
        if User.objects.filter(username__iexact=username).exists():
            raise forms.ValidationError("That username is taken; choose another.")
        return username

    def clean(self):
        data = super().clean()
        if (
            data.get("password")
            and data.get("password_again") is not None
            and data["password"] != data["password_again"]
        ):
            self.add_error("password_again", "The two passwords differ; type the same one twice.")
        return data


class SettingsForm(forms.ModelForm):
    """The settings of PATCH /api/v1/me (docs/api.md): the model's limits, the messages a person needs."""

    class Meta:
        model = User
        fields = ["display_name", "bio", "email", "share_reading"]
        labels = {
            "display_name": "Display name",
            "bio": "About you",
            "share_reading": "Show the people who follow me which boards I read",
            "email": "Email",
        }
        help_texts = {
            "display_name": "Shown beside your username; up to 50 characters.",
            "bio": "A few words on your profile; up to 300 characters.",
            "share_reading": "Off until you turn it on. Turning it off hides your reads at once.",
            "email": "Optional: only to reset a forgotten password. A new address gets a link to confirm it.",
        }
        widgets = {"bio": forms.Textarea(attrs={"rows": 4})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["email"].validators.append(RegexValidator(EMAIL_RE, f"Use {EMAIL_WORDS}."))


class LoginForm(AuthenticationForm):
    """Django's log-in form; someone whose account cannot sign in, giving its right password,
    is told why (suspended, or deleted) instead of "wrong password"."""

    def clean(self):
        try:
            return super().clean()
        except forms.ValidationError:
            words = selectors.closed_account_words(
                self.cleaned_data.get("username") or "", self.cleaned_data.get("password") or ""
            )
            if words:
                raise forms.ValidationError(words, code="inactive") from None
            raise


class ResetForm(PasswordResetForm):
    """Django's reset form, for confirmed addresses only (an unconfirmed one may be someone
    else's): the page answers the same whatever address is given."""

    def get_users(self, email):
        return (user for user in super().get_users(email) if user.email_verified)
